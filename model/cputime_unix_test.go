//go:build unix

package model

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report CPU per operation next to wall
// time because this machine's cores are shared: wall time then measures the neighbours' load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
