package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// cpuProfileEnv names a file into which doomwatch writes a CPU profile between a SIGUSR1 and the
// SIGUSR2 after it: how hack/benchscale profiles the dashboard over its churn window alone, and
// how a user can profile theirs for `go tool pprof`. It is an environment variable, not a flag,
// because it is for measuring doomwatch, not for using it; signals rather than an HTTP endpoint
// (net/http/pprof) because the server side of net/http would add 0.8 MB to the binary.
const cpuProfileEnv = "DOOMWATCH_CPUPROFILE"

// profileOnSignal arms the CPU profile when DOOMWATCH_CPUPROFILE names a file. Each SIGUSR1
// starts a profile (truncating the file), each SIGUSR2 ends it.
func profileOnSignal() {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		var f *os.File
		for s := range sigs {
			switch {
			case s == syscall.SIGUSR1 && f == nil:
				var err error
				if f, err = os.Create(path); err != nil {
					fmt.Fprintf(os.Stderr, "doomwatch: %s: %v\n", cpuProfileEnv, err)
					continue
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					fmt.Fprintf(os.Stderr, "doomwatch: %s: %v\n", cpuProfileEnv, err)
					f.Close()
					f = nil
				}
			case s == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				f.Close()
				f = nil
			}
		}
	}()
}
