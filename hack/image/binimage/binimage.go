// Package binimage builds a container image of one static binary, with no Docker daemon: one
// layer holding the binary at the root, and the config that runs it. hack/image builds doomwatch's
// image with it, and the e2e suite its real node's images.
package binimage

import (
	"archive/tar"
	"bytes"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Config is the image's: its binary's name at the root, its platform and how it runs.
type Config struct {
	Name, Arch      string
	Entrypoint, Cmd []string
	User            string // "" for root
	Labels          map[string]string
}

// Build is the image of bin, written as /c.Name (mode 0755, owned by root, at time 0, so that the
// same binary gives the same image).
func Build(bin []byte, c Config) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: c.Name, Mode: 0o755, Size: int64(len(bin)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", c.Arch
	cf.Config.Entrypoint, cf.Config.Cmd = c.Entrypoint, c.Cmd
	cf.Config.User, cf.Config.Labels = c.User, c.Labels
	return mutate.ConfigFile(img, cf)
}
