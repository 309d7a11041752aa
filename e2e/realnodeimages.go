package e2e

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"doomwatch/hack/image/binimage"
)

// The node's images, all built from e2e/cmd/nodeimage (no registry outside the machine is
// reachable): the sandbox's pause image, the test image, and the same test image in a repository
// that needs credentials.
const (
	PauseImage   = "doomwatch/pause:1"
	TestImage    = "doomwatch/nodeimage:1"
	PrivateImage = "private/nodeimage:1"
)

// The registry's only account; the node is never given it.
const registryUser, registryPassword = "doomwatch", "e2e"

// startRegistry serves go-containerregistry's in-memory registry on the node namespace's loopback
// (where containerd pulls) and on the host's (where the suite pushes), and pushes the images.
// Repositories under private/ answer 401 with a Basic challenge to requests without the account,
// as a private registry does.
func (n *RealNode) startRegistry(ctx context.Context) error {
	h := privateRepos(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	inNode, err := n.listenInNode()
	if err != nil {
		return fmt.Errorf("listening for the registry in the node: %w", err)
	}
	n.serve(inNode, h)
	n.Registry = inNode.Addr().String()
	onHost, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	n.serve(onHost, h)
	bin := n.path("nodeimage")
	if err := goBuild("./cmd/nodeimage", bin); err != nil {
		return err
	}
	push := onHost.Addr().String()
	n.RegistryOnHost = push
	for _, im := range []struct {
		ref        string
		entrypoint []string
		cmd        []string
	}{
		{PauseImage, []string{"/nodeimage", "pause"}, nil},
		{TestImage, []string{"/nodeimage"}, []string{"pause"}},
		{PrivateImage, []string{"/nodeimage"}, []string{"pause"}},
	} {
		img, err := binaryImage(bin, im.entrypoint, im.cmd)
		if err != nil {
			return err
		}
		ref, err := name.ParseReference(push+"/"+im.ref, name.Insecure)
		if err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		err = remote.Write(ref, img, remote.WithContext(pctx), remote.WithAuth(&authn.Basic{Username: registryUser, Password: registryPassword}))
		cancel()
		if err != nil {
			return fmt.Errorf("pushing %s: %w", im.ref, err)
		}
	}
	return nil
}

// privateRepos asks for Basic credentials on every request for a repository under private/
// (the distribution spec's 401 with a WWW-Authenticate challenge).
func privateRepos(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v2/private/") {
			if u, p, ok := r.BasicAuth(); !ok || u != registryUser || p != registryPassword {
				w.Header().Set("WWW-Authenticate", `Basic realm="doomwatch-e2e"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				// The body a distribution registry answers with (distribution/distribution
				// registry/api/errcode: ErrorCodeUnauthorized).
				_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}`)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// binaryImage is a one-layer image holding bin as /nodeimage.
func binaryImage(bin string, entrypoint, cmd []string) (v1.Image, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	return binimage.Build(b, binimage.Config{Name: "nodeimage", Arch: runtime.GOARCH, Entrypoint: entrypoint, Cmd: cmd})
}
