package classify

import "strings"

// deterministicMarkers are runtime error fragments that mean the container's configuration is
// wrong (a missing or non-executable entrypoint, a bad working directory) rather than that the
// node's runtime had a bad moment. They are the errno texts Go's os/exec and runc print: runc
// reports `exec: "x": executable file not found in $PATH`, `stat /x: no such file or directory`,
// `permission denied`, `not a directory` and `exec format error` when it cannot exec the entrypoint
// (opencontainers/runc libcontainer/standard_init_linux.go). containerd passes these through as
// StartError with exit code 128 (containerd internal/cri/server/helpers.go errorStartExitCode),
// CRI-O as CreateContainerError, dockershim as ContainerCannotRun with 126/127.
var deterministicMarkers = [...]string{
	"executable file not found",
	"no such file or directory",
	"permission denied",
	"not a directory",
	"exec format error",
}

// deterministic reports whether a runtime message shows a configuration error that retrying on
// the same or another node will not fix.
func deterministic(msg string) bool {
	for _, m := range deterministicMarkers {
		// Folded: CRI-O capitalises errno texts ("... not found in $PATH: No such file or directory").
		if containsFold(msg, m) {
			return true
		}
	}
	return false
}

// cacheSyncFailure matches kubelet's `failed to sync %s cache` (kubernetes/kubernetes#75260),
// the transient CreateContainerConfigError a pod sees while the kubelet's secret or configmap
// watch catches up (kubernetes/kubernetes#74755). Krane matches /failed to sync (.*?) cache/;
// two index checks do the same without a regexp.
func cacheSyncFailure(msg string) bool {
	const head, tail = "failed to sync ", " cache"
	i := strings.Index(msg, head)
	if i < 0 {
		return false
	}
	return strings.Contains(msg[i+len(head):], tail)
}

// containsFold reports whether s contains lower under ASCII case folding, without allocating
// (Krane's /not found/i). lower must be lower-case ASCII, as all the package's markers are.
func containsFold(s, lower string) bool {
	n := len(lower)
	if n == 0 {
		return true
	}
	c0 := lower[0]
outer:
	for i := 0; i+n <= len(s); i++ {
		if toLower(s[i]) != c0 {
			continue
		}
		for j := 1; j < n; j++ {
			if toLower(s[i+j]) != lower[j] {
				continue outer
			}
		}
		return true
	}
	return false
}

func toLower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// oneLine returns s with line breaks and tabs turned into single spaces and the ends trimmed, so a
// runtime message can sit inside a one-line Reason. It allocates only when s has such characters.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if r == '\r' || r == '\n' || r == '\t' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = r == ' '
		b.WriteRune(r)
	}
	return b.String()
}

// withDetail joins a reason head and a runtime message: "head: message", or "head" alone.
func withDetail(head, msg string) string {
	msg = oneLine(msg)
	if msg == "" {
		return head
	}
	return head + ": " + msg
}
