//go:build unix

package tui

import (
	"syscall"
	"testing"
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

// cpuMeter reports the CPU time per operation of a b.Loop benchmark as cpu-ms/op.
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter { return cpuMeter{start: cpuTime()} }

func (c *cpuMeter) report(b *testing.B, ops int) {
	b.ReportMetric(float64((cpuTime()-c.start).Nanoseconds())/float64(ops)/1e6, "cpu-ms/op")
}
