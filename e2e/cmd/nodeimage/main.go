// Command nodeimage is the only program in the images the e2e suite's real node runs: the pod
// sandbox's pause process and every test container. No registry outside the machine is
// reachable, so the suite builds it statically and packs it into images it serves itself.
//
//	nodeimage pause        sleep until SIGTERM or SIGINT, then exit 0 (the sandbox, a healthy app)
//	nodeimage crash        write a line to stderr and exit 1
//	nodeimage oom          allocate and touch memory until the kernel's OOM killer ends it
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// held is what oom allocates.
var held [][]byte

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nodeimage pause|crash|oom")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "pause":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
	case "crash":
		fmt.Fprintln(os.Stderr, "nodeimage: crashing on purpose")
		os.Exit(1)
	case "oom":
		for {
			b := make([]byte, 16<<20)
			// Touch every page, so the memory is charged to the container's cgroup.
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			held = append(held, b) // kept, so the collector cannot give it back
			time.Sleep(10 * time.Millisecond)
		}
	default:
		fmt.Fprintf(os.Stderr, "nodeimage: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}
