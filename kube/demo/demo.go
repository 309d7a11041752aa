// Package demo is the embedded demo cluster behind --demo: a client-go fake clientset, a
// simulated clock and a scenario engine that writes nodes, workloads and pods into the clientset
// as a control plane and kubelets would. The ordinary kube informers (kube.Start) watch that
// clientset, so the demo drives exactly the path a real cluster does; nothing in kube knows it is
// a demo.
package demo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	utilclock "k8s.io/utils/clock"

	"doomwatch/kube"
)

// Epoch is the simulated time at which the demo scenario starts. It is fixed so that a
// snapshot (`--demo --once --at 90s`) is the same on every run.
var Epoch = time.Date(2026, time.January, 15, 10, 0, 0, 0, time.UTC)

// Options configure the embedded demo cluster.
type Options struct {
	// Seed varies names, UIDs, container IDs and small timing jitter, never the story.
	Seed int64
	// Speed scales simulated time against real time in live mode (default 1).
	Speed float64
	// At > 0 selects snapshot mode: the story up to Epoch+At is in the clientset before the
	// informers list, and the clock stays there. Doomwatch then sees the cluster once, as --once
	// run at that moment would, not the earlier states a doomwatch watching since the start saw
	// (a container's first failed start, overwritten in its status by the second). At == 0 is
	// live mode: the story plays out, step by step, as the clock advances.
	At time.Duration
	// From starts live mode at this simulated time: every event up to it is applied before the
	// informers list, and the story plays on from there. A deploy gate starts at Deployed, as one
	// runs after the deploy.
	From time.Duration
	// Interval is the source's coalescing interval (kube.Options.Interval, default
	// kube.DefaultInterval), of simulated time: live mode hands the informers Interval/Speed of real
	// time (at least minInterval), so that doomwatch batches the story alike at any --speed.
	Interval time.Duration
	// Namespace and Selector scope the source as -n and -l do for a real cluster ("" for all).
	Namespace string
	Selector  string
	// Variant is which cluster of the fleet this is (StartFleet); Classic is the lone demo.
	Variant Variant

	// origin is the real time live mode begins at, shared by a fleet's clusters; zero is now.
	origin time.Time
	// real is the real time live mode follows (nil: the system's clock). Tests step one of their
	// own, to play the story at any --speed without waiting for it.
	real realTime
}

// realTime is what live mode needs of the real time: k8s.io/utils/clock's RealClock, or a test's.
type realTime interface {
	utilclock.PassiveClock
	NewTimer(d time.Duration) utilclock.Timer
}

// Variant is one demo cluster of --demo --fleet: the same shop in three regions, where a
// container runtime upgrade (containerd 2.2.0 on node-3) has reached eu and us, whose node-3s
// flake as the lone demo's does, but not ap, whose nodes all run 2.1.4. The payments tag typo
// went out in eu and ap; us deployed the tag that was pushed.
type Variant int

// The demo clusters.
const (
	Classic Variant = iota // --demo: the one cluster, in eu-west-1
	EU
	US
	AP
)

// Fleet are the clusters of --demo --fleet, in their order.
var Fleet = []Variant{EU, US, AP}

// Name is the cluster's context name.
func (v Variant) Name() string {
	switch v {
	case EU:
		return "demo-eu"
	case US:
		return "demo-us"
	case AP:
		return "demo-ap"
	}
	return "demo"
}

func (v Variant) region() string {
	switch v {
	case US:
		return "us-east-1"
	case AP:
		return "ap-southeast-1"
	}
	return "eu-west-1"
}

// calm: node-3's runtime was not upgraded, and nothing flakes.
func (v Variant) calm() bool { return v == AP }

// Start builds the demo cluster: a client-go fake clientset, a simulated clock and the
// scenario engine that writes objects into the clientset as a control plane and kubelets would
// (create, update, update status, delete). It then starts the ordinary informer kube.Source on that
// clientset, so the demo exercises exactly the code a real cluster does.
func Start(ctx context.Context, opts Options) (*kube.Source, error) {
	src, _, err := start(ctx, opts)
	return src, err
}

// start is Start, handing back the engine too.
func start(ctx context.Context, opts Options) (*kube.Source, *engine, error) {
	if opts.At < 0 {
		return nil, nil, fmt.Errorf("demo: --at must not be negative, got %s", opts.At)
	}
	if opts.Speed < 0 {
		return nil, nil, errors.New("demo: --speed must be positive")
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if opts.At == 0 && opts.From < 0 {
		return nil, nil, fmt.Errorf("demo: the starting time must not be negative, got %s", opts.From)
	}
	if opts.real == nil {
		opts.real = utilclock.RealClock{}
	}
	if opts.Interval <= 0 {
		opts.Interval = kube.DefaultInterval
	}
	// The tracker without field management: the demo never applies, and NewClientset's field
	// manager costs about a millisecond a write (client-go testing managedFieldObjectTracker
	// builds a REST mapper for every create and update), more than the rest of the demo together.
	cs := fake.NewSimpleClientset()
	eng := newEngine(opts.Seed, opts.Variant, cs)
	clk := &clock{epoch: Epoch, speed: opts.Speed, fixed: opts.At > 0, at: max(opts.At, opts.From), start: opts.origin, real: opts.real}
	if clk.start.IsZero() {
		clk.start = clk.real.Now()
	}
	interval := opts.Interval
	if !clk.fixed {
		interval = max(time.Duration(float64(interval)/opts.Speed), minInterval)
	}

	// Everything up to the starting point is in the clientset before the informers list, so the
	// first sync already shows it (in snapshot mode, that is the whole answer).
	eng.advance(clk.at)
	if err := eng.sync(ctx); err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	// From here on informers watch, and every write waits until they have read enough.
	eng.watches = watchClient(cs)
	src, err := startSource(ctx, eng, clk, interval, kube.Options{
		Namespace:     opts.Namespace,
		AllNamespaces: opts.Namespace == "",
		Selector:      opts.Selector,
		Interval:      interval,
		Now:           clk.Now,
		Context:       opts.Variant.Name(),
		Logs:          logsOf(cs),
	})
	return src, eng, err
}

// minInterval is the least coalescing interval live mode hands the informers, however high the
// --speed: below it the coalescer would only spin. At the default interval it binds from --speed
// 100 on, where doomwatch batches more than 100ms of the story together.
const minInterval = time.Millisecond

// StartFleet starts the clusters of --demo --fleet (Fleet), each as Start would with opts and a
// seed of its own, on one simulated clock, fanned into one kube.Fleet.
func StartFleet(ctx context.Context, opts Options) (*kube.Fleet, error) {
	var sources []*kube.Source
	if opts.real == nil {
		opts.real = utilclock.RealClock{}
	}
	origin := opts.real.Now()
	for i, v := range Fleet {
		o := opts
		o.Variant, o.Seed, o.origin = v, opts.Seed+int64(i), origin
		s, err := Start(ctx, o)
		if err != nil {
			return nil, err
		}
		sources = append(sources, s)
	}
	return kube.Join(ctx, sources, make([]string, len(sources))), nil
}

// startSource starts the Source on the engine's clientset and, in live mode, the engine, which
// writes no two steps less than two coalescing intervals (interval, of real time) apart. Should the
// engine fail (or panic: it runs in its own goroutine, where nothing else would recover it and the
// process would die with the terminal still in the dashboard's alternate screen), it stops the
// Source: Batches closes and Err says why.
func startSource(ctx context.Context, eng *engine, clk *clock, interval time.Duration, opts kube.Options) (*kube.Source, error) {
	if clk.fixed {
		return kube.Start(ctx, eng.client, opts)
	}
	ctx, stop := context.WithCancelCause(ctx)
	src, err := kube.Start(ctx, eng.client, opts)
	if err != nil {
		stop(nil)
		return nil, err
	}
	go func() {
		if err := eng.run(ctx, clk, 2*interval); err != nil {
			stop(fmt.Errorf("demo: %w", err))
		}
	}()
	return src, nil
}

// clock is the simulated clock. It is immutable once built, so any goroutine may read it.
type clock struct {
	epoch time.Time
	speed float64
	fixed bool
	at    time.Duration // the fixed time, or the time live mode began at
	start time.Time     // real time at which live mode began
	real  realTime
}

// Now returns the simulated time: Epoch+At in snapshot mode, otherwise Epoch+From plus the real
// time elapsed since the start, scaled by Speed.
func (c *clock) Now() time.Time { return c.epoch.Add(c.elapsed()) }

func (c *clock) elapsed() time.Duration {
	if c.fixed {
		return c.at
	}
	return c.at + time.Duration(float64(c.real.Since(c.start))*c.speed)
}

// until is the real time left until the simulated clock reads at (none if it already has).
func (c *clock) until(at time.Duration) time.Duration {
	return time.Duration(math.Ceil(float64(at-c.elapsed()) / c.speed))
}

// run plays the scenario in live mode until ctx ends: it waits for each step's time on the clock,
// then moves the world to it and writes it. Every step is written on its own, even when the clock
// has already passed several (a busy machine), and the next one no sooner than pace after it, so
// the informers deliver each step's state, as a cluster's API server does each write, rather than
// only the last one's. After the last step it holds the final state: the story stays on screen. It
// returns an error if a write fails for any reason other than ctx ending, or if a scenario step
// panics.
func (e *engine) run(ctx context.Context, clk *clock, pace time.Duration) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("scenario engine panicked: %v", r)
		}
	}()
	var wrote time.Time // real time of the last write
	for {
		at, ok := e.nextStep()
		if !ok {
			return nil
		}
		wait := clk.until(at)
		if !wrote.IsZero() {
			wait = max(wait, pace-clk.real.Since(wrote))
		}
		if wait > 0 {
			t := clk.real.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C():
			}
		}
		e.step(at)
		if err := e.sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wrote = clk.real.Now()
	}
}
