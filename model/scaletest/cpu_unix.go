//go:build unix

package scaletest

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime is the process's user+system CPU time. Benchmarks report CPU per operation next to wall
// time because this machine's cores are shared: wall time then measures the neighbours' load.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// CPUMeter reports the CPU time per operation of a b.Loop benchmark as cpu-ms/op.
type CPUMeter struct{ start time.Duration }

// StartCPU starts a CPUMeter.
func StartCPU() CPUMeter { return CPUMeter{start: CPUTime()} }

// Report reports the CPU time since StartCPU over ops operations.
func (c *CPUMeter) Report(b *testing.B, ops int) {
	b.ReportMetric(float64((CPUTime()-c.start).Nanoseconds())/float64(ops)/1e6, "cpu-ms/op")
}
