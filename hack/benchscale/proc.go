package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on every Linux
// architecture Go supports (the kernel exports it as a constant to user space).
const clockTicks = 100

// cpuTicks reads the process's user plus system time, in clock ticks, from /proc/<pid>/stat.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields count from the
	// last ')'. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parsing /proc/%d/stat times", pid)
	}
	return ut + st, nil
}

// memory is the resident set of a process from /proc/<pid>/status, in bytes: now (VmRSS) and
// its peak so far (VmHWM).
type memory struct{ rss, hwm int64 }

func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		for _, want := range []struct {
			key string
			dst *int64
		}{{"VmRSS:", &m.rss}, {"VmHWM:", &m.hwm}} {
			if rest, ok := strings.CutPrefix(line, want.key); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err != nil {
					return m, fmt.Errorf("parsing %q: %w", line, err)
				}
				*want.dst = kb << 10
			}
		}
	}
	return m, sc.Err()
}

// window is the CPU and memory of a process, or of several together, over a span of time.
type window struct {
	took          time.Duration
	cores         float64 // CPU time / wall time
	rssEnd        int64   // VmRSS at the end
	rssMax        int64   // the largest VmRSS sampled (once a second)
	hwm           int64   // VmHWM at the end: the peak since the process started
	samples       int
	sampleErr     error
	before, after int64 // CPU ticks
}

// observe samples pid for d (or until ctx ends): CPU from the first to the last reading of
// /proc/<pid>/stat, RSS once a second.
func observe(ctx context.Context, pid int, d time.Duration) (window, error) {
	return observeAll(ctx, []int{pid}, d)
}

// observeAll is observe over several processes at once, as one: their CPU added up, their VmRSS
// summed at each sample (rssMax is the largest sum) and their VmHWM summed (each process's own
// peak, so an upper bound of their peak together).
func observeAll(ctx context.Context, pids []int, d time.Duration) (window, error) {
	var w window
	start := time.Now()
	ticks := func() (int64, error) {
		var sum int64
		for _, pid := range pids {
			t, err := cpuTicks(pid)
			if err != nil {
				return 0, err
			}
			sum += t
		}
		return sum, nil
	}
	var err error
	if w.before, err = ticks(); err != nil {
		return w, err
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	end := time.NewTimer(d)
	defer end.Stop()
	sample := func() {
		var rss, hwm int64
		for _, pid := range pids {
			m, err := readMemory(pid)
			if err != nil {
				w.sampleErr = err
				return
			}
			rss, hwm = rss+m.rss, hwm+m.hwm
		}
		w.samples++
		w.rssEnd, w.hwm = rss, hwm
		w.rssMax = max(w.rssMax, rss)
	}
	sample()
loop:
	for {
		select {
		case <-tick.C:
			sample()
		case <-end.C:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	sample()
	if w.after, err = ticks(); err != nil {
		return w, err
	}
	w.took = time.Since(start)
	w.cores = float64(w.after-w.before) / clockTicks / w.took.Seconds()
	return w, w.sampleErr
}
