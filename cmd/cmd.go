// Package cmd holds doomwatch's commands, one file each: the root command (the dashboard, and its
// --once and --watch outputs) and the subcommands named by the first argument (wait). A command
// declares its own flags, help, validation and run, as stern's cmd/cmd.go and crush's
// internal/cmd do; main only names the program and maps the errors Execute returns to exit codes
// and hints.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"doomwatch/kube"
	"doomwatch/model"
	"doomwatch/report"
)

// commands are doomwatch's commands, the root first. A new subcommand is a file and a line here.
var commands = []func() command{newRoot, newWait, newRecord, newReplay, newServe}

// command is one of doomwatch's commands.
type command interface {
	// name is the first argument that selects the command, "" for the root.
	name() string
	// addFlags declares the command's flags on fs, the shared ones through common's groups, and
	// returns the options they fill.
	addFlags(fs *pflag.FlagSet) *common
	// usage is the help above the flags; prog is how the user ran doomwatch.
	usage(prog string) string
	// validate checks the parsed flags (its own, then common's validate and validateValues) and
	// args (after its name).
	validate(fs *pflag.FlagSet, args []string) error
	// validateFleet checks that the command can watch several clusters at once.
	validateFleet() error
	// source is what the source watches for the command.
	source() sourceOptions
	// run runs the command on a started source.
	run(ctx context.Context, e *env) error
}

// standalone is a command that runs without a source (replay reads a recording): Execute runs it
// once its flags are valid, without connecting to anything.
type standalone interface {
	runAlone(ctx context.Context, p *Program) error
}

// sourceOptions are what a command's source watches.
type sourceOptions struct {
	// selector selects pods (wait's -l selects Deployments, not pods).
	selector      string
	allNamespaces bool
	// namespace, when set, is the one namespace watched in place of -n or the kubeconfig's.
	namespace string
	// demoFrom is the simulated time the demo's story starts at (demo.Options.From).
	demoFrom time.Duration
}

// podFlags are -A and -l, the pods the source watches; verb says what the command does with them.
func (s *sourceOptions) podFlags(fs *pflag.FlagSet, verb string) {
	fs.BoolVarP(&s.allNamespaces, "all-namespaces", "A", false, verb+" pods in every namespace.")
	fs.StringVarP(&s.selector, "selector", "l", "", "Label selector for pods, as kubectl's -l (e.g. app=web,tier!=cache).")
}

// validate parses -l as the source will, so that a selector it could not use is a usage error,
// told before connecting to anything.
func (s *sourceOptions) validate() error {
	_, err := parseSelector(s.selector)
	return err
}

// parseSelector parses a -l selector as kubectl does (labels.Parse); "" selects everything.
func parseSelector(selector string) (labels.Selector, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("parsing -l %q: %w", selector, err)
	}
	return sel, nil
}

// Program is what main tells the commands about the program.
type Program struct {
	// Name is how the user ran doomwatch: "doomwatch", or "kubectl doomwatch" as a kubectl plugin.
	Name           string
	Version        string
	Stdout, Stderr io.Writer
	// Stdin is read by wait -f - (the manifests on standard input); nil when there is none.
	Stdin io.Reader
	// ExitCode is the exit code main gives an error Execute returns (nil: success), for the
	// documents that print it (wait -o json).
	ExitCode func(error) int
}

// env is what a command runs with: the program, the source and the model it feeds, started
// before run unless the command is on screen first (onScreen).
type env struct {
	*Program
	src *kube.Fleet
	m   *model.Fleet
	// deadline bounds all that --request-timeout covers: the connection check and the first
	// sync share it, so the worst case is the timeout, not twice it. The informers have none.
	deadline time.Time
	// start starts the source and the model, setting src and m; Execute calls it before run,
	// unless the command is on screen first (onScreen).
	start func(ctx context.Context) error
	// contexts are the contexts start connects to, and o the options it starts with.
	contexts []string
	o        *common
}

// onScreen is a command that is on screen while its source connects (the dashboard says where
// to, rather than leave the terminal blank for as long as --request-timeout): when first is true
// for it, Execute leaves env.start to its run.
type onScreen interface {
	first() bool
}

// Execute parses args, finds the command and runs it. It prints the help, the version and the
// commands' output itself; the error it returns is main's to print and map to an exit code.
func Execute(p *Program, args []string) error {
	c, fs, o, rest, err := parse(args)
	usageErr := func(err error) error { return &UsageError{Err: err, Command: c.name()} }
	if err != nil {
		return usageErr(err)
	}
	if o.help {
		fmt.Fprint(p.Stdout, c.usage(p.Name)+fs.FlagUsages())
		return nil
	}
	if o.version {
		fmt.Fprintln(p.Stdout, "doomwatch", p.Version)
		return nil
	}
	if err := c.validate(fs, rest); err != nil {
		return usageErr(err)
	}
	// What the command reads before it connects (wait -f's manifests): a bad file fails at once.
	if pr, ok := c.(preparer); ok {
		if err := pr.prepare(p); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Stopping the source (informers, demo engine) when Execute returns.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if a, ok := c.(standalone); ok {
		return a.runAlone(ctx, p)
	}
	timeout, err := o.kube.RequestTimeout()
	if err != nil {
		return usageErr(err)
	}

	closeLog, err := quietLogs(o.logFile)
	if err != nil {
		return err
	}
	defer closeLog()

	contexts, err := o.contexts()
	if err != nil {
		return o.cluster(err)
	}
	if len(contexts) > 1 {
		if err := c.validateFleet(); err != nil {
			return usageErr(err)
		}
	}
	e := &env{Program: p, deadline: time.Now().Add(timeout), contexts: contexts, o: o}
	e.start = func(ctx context.Context) error {
		src, err := o.start(ctx, c.source(), contexts, e.deadline)
		if err != nil {
			return o.cluster(err)
		}
		e.src, e.m = src, model.NewFleet(o.model, src.Contexts())
		for i, c := range e.m.Clusters() {
			c.Server = src.Servers()[i]
		}
		return nil
	}
	if s, ok := c.(onScreen); !ok || !s.first() {
		if err := e.start(ctx); err != nil {
			return err
		}
	}
	return c.run(ctx, e)
}

// parse finds the command (the first argument that is not a flag names a subcommand, wherever
// the flags are, as kubectl finds its subcommands) and parses args with that command's flags.
func parse(args []string) (command, *pflag.FlagSet, *common, []string, error) {
	// Every command's flags at once, only to find the command: a flag's value is not taken for
	// its name. Each takes any value here (replay's --at is a time, the root's a duration), so
	// that the command is found even when a value is bad; its own flags then say so.
	all := pflag.NewFlagSet("", pflag.ContinueOnError)
	all.SetOutput(io.Discard)
	for _, newCmd := range commands {
		fs, _ := flagSet(newCmd())
		fs.VisitAll(func(f *pflag.Flag) {
			if all.Lookup(f.Name) == nil && (f.Shorthand == "" || all.ShorthandLookup(f.Shorthand) == nil) {
				all.VarPF(anyValue{}, f.Name, f.Shorthand, "").NoOptDefVal = f.NoOptDefVal
			}
		})
	}
	c := commands[0]()
	if all.Parse(args) == nil && all.NArg() > 0 {
		for _, newCmd := range commands[1:] {
			if sub := newCmd(); sub.name() == all.Arg(0) {
				c = sub
			}
		}
	}
	fs, o := flagSet(c)
	err := fs.Parse(args)
	rest := fs.Args()
	if c.name() != "" && len(rest) > 0 {
		rest = rest[1:]
	}
	return c, fs, o, rest, err
}

// anyValue is a flag value that takes anything (parse).
type anyValue struct{}

func (anyValue) String() string   { return "" }
func (anyValue) Set(string) error { return nil }
func (anyValue) Type() string     { return "string" }

// flagSet is command c's flag set.
func flagSet(c command) (*pflag.FlagSet, *common) {
	fs := pflag.NewFlagSet("doomwatch", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by main, once, on one line
	fs.SortFlags = false
	return fs, c.addFlags(fs)
}

// preparer is a command with input of its own to read before it connects.
type preparer interface {
	prepare(p *Program) error
}

// LinesError is several problems, one line each (wait -f's manifests that do not parse, the
// objects not found): main prints each on a line of its own, sanitised.
type LinesError struct{ Lines []string }

func (e *LinesError) Error() string { return strings.Join(e.Lines, "; ") }

// UsageError is a bad flag, value or argument.
type UsageError struct {
	Err error
	// Command is the command whose flags or arguments were wrong ("" for the root, "wait", ...):
	// its help is the one that documents them.
	Command string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ClusterError is an error from a real cluster (not the demo): reaching it, its credentials, its
// RBAC. main adds the hint that fits its kind (kube.ErrUnreachable and the rest).
type ClusterError struct{ Err error }

func (e *ClusterError) Error() string { return e.Err.Error() }
func (e *ClusterError) Unwrap() error { return e.Err }

// GateError is a deploy gate's verdict other than complete, already printed.
type GateError struct{ Verdict report.Verdict }

func (e *GateError) Error() string { return "the rollout is " + string(e.Verdict) }

// ErrInterrupted: SIGINT or SIGTERM, or the source stopped, before the command was done.
var ErrInterrupted = errors.New("interrupted")

// ErrTimedOut is wrapped by an error of wait's --timeout passing before the gate could look.
var ErrTimedOut = errors.New("timed out")

// kindError is an error of one of kube's kinds (kube.ErrForbidden, ...) with a message of its own.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }
