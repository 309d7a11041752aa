// Command image builds doomwatch's container image without a Docker daemon: one layer holding the
// static binary as /doomwatch, its entrypoint, run as 65532:65532 (distroless' nonroot). Nothing
// else: no shell, no /etc/passwd (the user is numeric), no CA bundle (in a pod, client-go trusts
// the service account's ca.crt). It pushes the image or writes a tarball that `docker load` and
// `ctr images import` read; deploy/ runs it. Usage, from the module:
//
//	go run ./hack/image [--binary PATH] [--arch ARCH] [--version V] [--source URL] --push REF [--insecure]
//	go run ./hack/image [...] --tarball FILE [--tag REF]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"doomwatch/hack/image/binimage"
)

const usage = "usage: go run ./hack/image [--binary PATH] [--arch ARCH] [--version V] [--source URL] (--push REF [--insecure] | --tarball FILE [--tag REF])"

// options are the command line's.
type options struct {
	binary, arch, version, source string
	push, tarball, tag            string
	insecure                      bool
}

func main() {
	var o options
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.binary, "binary", "", "a linux doomwatch binary to put in the image (default: build one)")
	fs.StringVar(&o.arch, "arch", runtime.GOARCH, "GOARCH to build for, and the image's architecture")
	fs.StringVar(&o.version, "version", "", "main.version of the binary built, and the org.opencontainers.image.version label")
	fs.StringVar(&o.source, "source", "", "the org.opencontainers.image.source label: where the source is")
	fs.StringVar(&o.push, "push", "", "push the image to this reference (REGISTRY/REPO:TAG)")
	fs.BoolVar(&o.insecure, "insecure", false, "push over plain HTTP (a local test registry)")
	fs.StringVar(&o.tarball, "tarball", "", "write the image to this file instead, for docker load or ctr images import")
	fs.StringVar(&o.tag, "tag", "doomwatch:latest", "the tarball's image name")
	err := fs.Parse(os.Args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Println(usage)
		fs.SetOutput(os.Stdout)
		fs.PrintDefaults()
		return
	case err != nil:
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case (o.push == "") == (o.tarball == ""):
		err = errors.New("give one of --push REF and --tarball FILE")
	case o.insecure && o.push == "":
		err = errors.New("--insecure is for --push")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "image: %v (%s)\n", err, usage)
		os.Exit(2)
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// run builds the image and pushes or writes it; a push prints the pushed digest to stdout.
func run(o options, stdout io.Writer) error {
	// References are parsed before the build, so that a bad one fails at once.
	var opts []name.Option
	if o.insecure {
		opts = append(opts, name.Insecure)
	}
	s := o.tag
	if o.push != "" {
		s = o.push
	}
	ref, err := name.ParseReference(s, opts...)
	if err != nil {
		return err
	}
	bin := o.binary
	if bin == "" {
		dir, err := os.MkdirTemp("", "doomwatch-image")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "doomwatch")
		if err := build(bin, o.arch, o.version); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	img, err := image(b, o.arch, labels(o))
	if err != nil {
		return err
	}
	if o.tarball != "" {
		return tarball.WriteToFile(o.tarball, ref, img)
	}
	if err := remote.Write(ref, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s@%s\n", ref.Context(), d)
	return nil
}

// build cross-builds the module's main package (the module path is "doomwatch", so the build
// needs no working directory) as a static linux binary: no cgo, so no libc in the image.
func build(out, arch, version string) error {
	ldflags := "-s -w"
	if version != "" {
		ldflags += " -X main.version=" + version
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags="+ldflags, "-o", out, "doomwatch")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b)
	}
	return nil
}

// labels are the OCI annotations' keys as image labels (opencontainers/image-spec annotations.md);
// none says when the image was made, so the same binary makes the same image.
func labels(o options) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       "doomwatch",
		"org.opencontainers.image.description": "doomwatch serve: rollout verdicts as Prometheus metrics",
	}
	if o.version != "" {
		l["org.opencontainers.image.version"] = o.version
	}
	if o.source != "" {
		l["org.opencontainers.image.source"] = o.source
	}
	return l
}

// image is the one-layer image holding bin as /doomwatch, owned by root and not writable by the
// user it runs as.
func image(bin []byte, arch string, labels map[string]string) (v1.Image, error) {
	return binimage.Build(bin, binimage.Config{Name: "doomwatch", Arch: arch, Entrypoint: []string{"/doomwatch"}, User: "65532:65532", Labels: labels})
}
