package main

import (
	"archive/tar"
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const fakeBinary = "#!not really doomwatch"

// TestTarball reads back, as docker load would, the image --tarball writes from --binary.
func TestTarball(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "image.tar")
	if err := run(options{binary: fakeBin(t), arch: "arm64", version: "v1.2.3", tarball: out, tag: "doomwatch:v1.2.3"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("doomwatch:v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	checkImage(t, img, "arm64")
	if cf, _ := img.ConfigFile(); cf.Config.Labels["org.opencontainers.image.version"] != "v1.2.3" {
		t.Errorf("labels %v, want org.opencontainers.image.version v1.2.3", cf.Config.Labels)
	}
}

// TestPush pushes over plain HTTP to an in-memory registry, as the e2e does, and pulls it back.
func TestPush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/doomwatch:e2e"
	if err := run(options{binary: fakeBin(t), arch: "amd64", push: ref, insecure: true}, io.Discard); err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	checkImage(t, img, "amd64")
}

func fakeBin(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "doomwatch")
	if err := os.WriteFile(bin, []byte(fakeBinary), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// checkImage checks what the Deployment relies on: /doomwatch, executable, is the entrypoint and
// the only file, and the image runs as 65532:65532 on linux/arch.
func checkImage(t *testing.T, img v1.Image, arch string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/doomwatch"}) || cf.Config.User != "65532:65532" || cf.OS != "linux" || cf.Architecture != arch {
		t.Errorf("entrypoint %q, user %q, platform %s/%s; want [/doomwatch], 65532:65532, linux/%s",
			cf.Config.Entrypoint, cf.Config.User, cf.OS, cf.Architecture, arch)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var files []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, h.Name)
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "doomwatch" && (h.Mode != 0o755 || !bytes.Equal(b, []byte(fakeBinary))) {
			t.Errorf("doomwatch: mode %o, %q; want 755, the binary given", h.Mode, b)
		}
	}
	if !slices.Equal(files, []string{"doomwatch"}) {
		t.Errorf("layer holds %q, want [doomwatch]", files)
	}
}
