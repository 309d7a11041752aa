package classify

import "strings"

// execErrnos are the errno texts that, said of the container's own command or working directory,
// mean the workload is misconfigured: retrying on this or any node gives the same answer. Go's
// os/exec and syscall print them in lower case; crun prints strerror's capitalised form ("No such
// file or directory"), so they are matched with ASCII case folding.
var execErrnos = [...]string{
	"executable file not found",
	"no such file or directory",
	"permission denied",
	"not a directory",
	"is a directory",
	"exec format error",
	"operation not permitted",
}

// commandError reports whether a runtime message is an error about executing the container's own
// command or changing to its working directory. The errno texts of execErrnos count only right
// after the command or directory in one of the forms the runtimes print; the same texts inside a
// cgroup, mount or namespace error (`openat2 /sys/fs/cgroup/...: no such file or directory`) are
// node trouble and must not match:
//
//   - runc libcontainer (standard_init_linux.go): `exec: "serve": executable file not found in
//     $PATH`, `exec: "/app": permission denied`, `exec: "/app": stat /app: no such file or
//     directory`; Docker quotes it once more: `exec: \"serve\": ...`.
//   - runc 1.2+ (standard_init_linux.go returns an os.PathError): `unable to start container
//     process: exec /app: exec format error`.
//   - runc (init_linux.go finalizeNamespace): `chdir to cwd ("/srv") set in config.json failed:
//     no such file or directory`.
//   - crun (crun_make_error appends ": " and strerror, capitalised). The command, at create time
//     (find_executable, src/libcrun/utils.c since 1.21, src/libcrun/container.c before):
//     "executable file `serve` not found in $PATH: No such file or directory" (since 1.21 an
//     absolute path drops " in $PATH"), "the path `/app` exists but it is not executable:
//     Operation not permitted", "the path `/etc` is not a regular file: Operation not permitted",
//     and before 1.21 "open executable: Permission denied" (or "Operation not permitted"). The
//     working directory: "chdir to `/srv`: Not a directory" (libcrun_safe_chdir, src/libcrun/
//     linux.c, since 1.14.1), "chdir `/srv`: ..." (1.4 to 1.14) and "chdir: ..." (before 1.4).
//     crun formats its own moves on the node the same way: "chdir to `<rootfs>`" (move_root),
//     "chdir to `/`", "chdir `<host cwd>`" after joining a mount namespace, "fchdir `<rootfs>`"
//     (do_pivot) and "chdir(.)"; a path of the node's container storage (nodePath) or another
//     word ending in "chdir" is not the working directory. Since 1.21 any other lookup error is
//     "open `<command>`: <strerror>", the form of every file crun fails to open on the node
//     (cgroup files, the rootfs), so it is not a marker.
//
// The shim's own failure to execute the OCI runtime binary has runc's `exec: "<name>": ...` form
// too, because both come from Go's os/exec: containerd's shim (cmd/containerd-shim-runc-v2/process
// init.go runtimeError) reports it as `OCI runtime create failed: unable to retrieve OCI runtime
// error (open .../log.json: no such file or directory): exec: "nvidia-container-runtime":
// executable file not found in $PATH` (NVIDIA/nvidia-docker#1269, containerd/containerd#11557),
// or right after `OCI runtime create failed: ` when the runtime's log was empty. The runtime
// missing on a node is node trouble, so an exec error in that position is not the command's
// (shimExec).
//
// Every marker contains "exec", "chdir" or crun's "the path `", so the message is scanned once for
// "exec" and once for the other two, whose second letter is the same (nextWord, exact case: runc,
// crun, Docker and containerd write these words and the text around them in lower case; only
// crun's strerror is capitalised, so the errno alone is compared with ASCII case folding). It does
// not allocate.
func commandError(msg string) bool {
	return execError(msg) || chdirError(msg)
}

// execError reports an error about executing the container's command: each occurrence of "exec"
// is checked against the runc, Docker and crun forms above.
func execError(msg string) bool {
	for off := 0; ; {
		p, _ := nextWord(msg, off, "exec", "", 1)
		if p < 0 {
			return false
		}
		off = p + len("exec")
		before, rest := msg[:p], msg[p:]
		switch {
		case strings.HasPrefix(rest, `exec: "`):
			if !shimExec(before) && operandErrno(rest[len(`exec: "`):], `": `, false) {
				return true
			}
		case strings.HasPrefix(rest, `exec: \"`):
			if !shimExec(before) && operandErrno(rest[len(`exec: \"`):], `\": `, false) {
				return true
			}
		case strings.HasPrefix(rest, "exec ") && strings.HasSuffix(before, "unable to start container process: "):
			if operandErrno(rest[len("exec "):], ": ", true) {
				return true
			}
		case strings.HasPrefix(rest, "executable file `"):
			if crunNotFound(rest[len("executable file `"):]) {
				return true
			}
		case strings.HasPrefix(rest, "executable") && strings.HasSuffix(before, "open "):
			if operandErrno(rest[len("executable"):], ": ", true) {
				return true
			}
		case strings.HasPrefix(rest, "executable: ") && strings.HasSuffix(before, "` exists but it is not "):
			if strings.Contains(before, "the path `") && errnoFollows(rest[len("executable: "):]) {
				return true
			}
		}
	}
}

// chdirError reports an error about changing to the container's working directory, or crun's
// "the path `<command>` is not a regular file: <strerror>" (find_executable, src/libcrun/utils.c
// since 1.21: the command is a directory or a device), which the same scan finds.
func chdirError(msg string) bool {
	for off := 0; ; {
		p, w := nextWord(msg, off, "chdir", "the path `", 1)
		if p < 0 {
			return false
		}
		off = p + len(w)
		if w != "chdir" {
			if notRegularFile(msg[off:]) {
				return true
			}
			continue
		}
		if p > 0 && isLetter(msg[p-1]) {
			continue // crun's "fchdir `<rootfs>`" (do_pivot) is about the node's root filesystem
		}
		rest := msg[off:]
		var ok bool
		switch {
		case strings.HasPrefix(rest, " to cwd ("):
			ok = operandErrno(rest[len(" to cwd ("):], ") set in config.json failed: ", false)
		case strings.HasPrefix(rest, " to `"):
			ok = crunCwd(rest[len(" to `"):])
		case strings.HasPrefix(rest, " `"):
			ok = crunCwd(rest[len(" `"):])
		case strings.HasPrefix(rest, ": "):
			ok = errnoFollows(rest[len(": "):]) // crun before 1.4: "chdir: <strerror>"
		}
		if ok {
			return true
		}
	}
}

// crunNotFound reports whether s, the text after crun's "executable file `", is the rest of
// find_executable's "<command>` not found[ in $PATH]: <strerror>".
func crunNotFound(s string) bool {
	j := strings.Index(s, "` not found")
	if j < 0 {
		return false
	}
	s = s[j+len("` not found"):]
	s = strings.TrimPrefix(s, " in $PATH")
	return strings.HasPrefix(s, ": ") && errnoFollows(s[len(": "):])
}

// crunCwd reports whether s, the text after crun's "chdir `" or "chdir to `", is
// "<dir>`: <strerror>" about the container's working directory rather than a path on the node.
func crunCwd(s string) bool {
	j := strings.Index(s, "`: ")
	return j >= 0 && !nodePath(s[:j]) && errnoFollows(s[j+len("`: "):])
}

// notRegularFile reports whether s, the text after crun's "the path `", is
// "<command>` is not a regular file: <strerror>".
func notRegularFile(s string) bool {
	const tail = "` is not a regular file: "
	j := strings.IndexByte(s, '`')
	return j >= 0 && strings.HasPrefix(s[j:], tail) && errnoFollows(s[j+len(tail):])
}

// nodePath reports whether a path crun changed to is one of its own on the node rather than the
// container's working directory: "/" (after pivot_root or setns) or a path of the node's container
// storage, which names a container or layer by a 64-digit hex ID (containers/storage under CRI-O:
// /var/lib/containers/storage/overlay/<id>/merged, the bundle /run/containers/storage/
// overlay-containers/<id>/userdata; containerd: /run/containerd/io.containerd.runtime.v2.task/
// k8s.io/<id>/rootfs). A working directory a pod sets is not expected to carry one.
func nodePath(p string) bool {
	if p == "/" {
		return true
	}
	for p != "" {
		var dir string
		dir, p, _ = strings.Cut(p, "/")
		if len(dir) == 64 && isHex(dir) {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isLetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// nextWord returns the index of the first occurrence in s at or after off of word or, unless alt
// is empty, of alt, and which of the two it found; -1 if neither occurs. It looks for word[at], a
// letter that is rare in runtime messages ('x' of "exec", 'h' of "chdir" and "the path `"; alt
// must have the same letter there), with the vectorised strings.IndexByte and compares the words
// only there; strings.Index would stop at every 'e' and 'c' of a long message.
func nextWord(s string, off int, word, alt string, at int) (int, string) {
	for i := off + at; i < len(s); {
		j := strings.IndexByte(s[i:], word[at])
		if j < 0 {
			return -1, ""
		}
		p := i + j - at
		if strings.HasPrefix(s[p:], word) {
			return p, word
		}
		if alt != "" && strings.HasPrefix(s[p:], alt) {
			return p, alt
		}
		i += j + 1
	}
	return -1, ""
}

// operandErrno reports whether s is an operand (a command or directory) ended by close and
// followed by one of execErrnos. bare says the operand is a bare word or path, which has no
// spaces: text with spaces before close is another clause, not the operand.
func operandErrno(s, close string, bare bool) bool {
	j := strings.Index(s, close)
	if j < 0 || bare && strings.ContainsAny(s[:j], " \t") {
		return false
	}
	return errnoFollows(s[j+len(close):])
}

// shimExec reports whether an `exec: "<name>"` error that follows before is the containerd shim
// failing to execute the OCI runtime rather than the runtime failing to execute the command: it
// comes right after the shim's "unable to retrieve OCI runtime error (<log error>): ", or right
// after "OCI runtime create failed: " (runc's own errors there start "runc create failed: " or
// with a source location, never with `exec: `).
func shimExec(before string) bool {
	const retrieve = "unable to retrieve OCI runtime error ("
	if strings.HasSuffix(before, "OCI runtime create failed: ") {
		return true
	}
	if !strings.HasSuffix(before, "): ") {
		return false
	}
	k := strings.LastIndex(before, retrieve)
	return k >= 0 && strings.IndexByte(before[k+len(retrieve):len(before)-len("): ")], ')') < 0
}

// errnoFollows reports whether s starts with one of execErrnos, allowing for runc's one extra
// `stat /x: ` clause between the command and the errno.
func errnoFollows(s string) bool {
	for clause := 0; clause < 2; clause++ {
		for _, e := range execErrnos {
			if hasPrefixFold(s, e) {
				return true
			}
		}
		if !strings.HasPrefix(s, "stat ") && !strings.HasPrefix(s, "lstat ") {
			return false
		}
		j := strings.Index(s, ": ")
		if j < 0 {
			return false
		}
		s = s[j+2:]
	}
	return false
}

func hasPrefixFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if LowerASCII(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

// pullOutcome is what an image pull error says about the image.
type pullOutcome uint8

const (
	pullRetry        pullOutcome = iota // network, registry or node trouble: the kubelet retries it
	pullRateLimit                       // the registry's rate limit: a retry after it resets succeeds
	pullNotFound                        // the registry says the image or tag does not exist
	pullAccessDenied                    // the registry refuses: no such repository, or no credentials
)

// Registry answers that waiting will not fix. Rate limits (429, "toomanyrequests") are checked
// first: Docker Hub's rate-limit text asks the user to authenticate and would otherwise look like a
// refusal; CRI-O and Docker carry only "toomanyrequests" (cri-o/cri-o#5282, ceph/ceph-csi#2029).
// Refusals (each seen verbatim in a fixture under testdata/pull-*):
//   - containerd: "pull access denied, repository does not exist or may require authorization:
//     server message: insufficient_scope" (appscode/charts#1069), "401 Unauthorized" and "403
//     Forbidden" statuses (kubernetes/kubernetes#110675), and a token endpoint's bare status at the
//     end, "unexpected status from GET request to ...: 401 " (jfrog/jfrog-credentials-provider#41);
//   - Docker: "pull access denied for X, repository does not exist or may require 'docker login'",
//     "no basic auth credentials" (kubernetes/minikube#20613, #9161);
//   - CRI-O: "requested access to the resource is denied", quay's "unauthorized: access to the
//     requested resource is not authorized" (stolostron/deploy#270).
//
// "failed to fetch anonymous token" alone is no refusal: with a network error after it, it is
// transient (ciiiii/cloudflare-docker-proxy#79). Not found: containerd's "<ref>: not found" after
// "failed to resolve reference" (Krane's /not found/i), CRI-O's and Docker's "manifest unknown".
// gRPC's "code = NotFound" is not used: containerd sets it for node-local snapshot errors too.
var (
	pullRateLimitMarkers = [...]string{"429 too many requests", "toomanyrequests"}
	pullDeniedMarkers    = [...]string{
		"pull access denied",
		"repository does not exist or may require",
		"insufficient_scope",
		"401 unauthorized",
		"403 forbidden",
		"requested access to the resource is denied",
		"access to the requested resource is not authorized",
		"unauthorized: authentication required",
		"no basic auth credentials",
	}
	pullNotFoundMarkers = [...]string{"not found", "manifest unknown"}
	// Node-local content-store and snapshotter errors: containerd says "not found" of a layer, blob
	// or snapshot it expected in its own store, although the image exists in the registry
	// (containerd/containerd#3604, #8173, moby/moby#52411).
	pullLocalMarkers = [...]string{
		"failed to extract layer",
		"content digest",
		"failed to get reader from content store",
		"failed to unpack image",
		"extraction snapshot",
		"parent snapshot",
		"failed commit on ref",
	}
)

// pullError judges an image pull error message (ErrImagePull's, the one kubelet 1.32+ appends to
// ImagePullBackOff, or the one in the kubelet's Failed event).
func pullError(msg string) pullOutcome {
	if anyFold(msg, pullRateLimitMarkers[:]) {
		return pullRateLimit
	}
	if anyFold(msg, pullDeniedMarkers[:]) || bareAuthStatus(msg) {
		return pullAccessDenied
	}
	if anyFold(msg, pullNotFoundMarkers[:]) && !anyFold(msg, pullLocalMarkers[:]) {
		return pullNotFound
	}
	return pullRetry
}

// rateLimitText is the registry's own answer in a rate-limited pull error: the message from its
// error code on, "toomanyrequests: You have reached your pull rate limit. …" (Docker Hub's, which
// containerd prints after "429 Too Many Requests - Server message: " and CRI-O and Docker after
// their own prefixes), or from the bare status, "429 Too Many Requests", for a registry that sends
// no error body. The runtime's wrapping before it (the RPC error, the image and manifest URL) says
// nothing the reason's head and the image column do not; Verdict.Message keeps the whole text.
func rateLimitText(msg string) string {
	i := indexFold(msg, "toomanyrequests")
	if i < 0 {
		i = indexFold(msg, "429 too many requests")
	}
	if i < 0 {
		return oneLine(msg)
	}
	return oneLine(msg[i:])
}

// bareAuthStatus reports a registry request that ended in a bare 401 or 403 status, as
// containerd's "unexpected status from GET request to <url>: 401 " prints an empty status text.
func bareAuthStatus(msg string) bool {
	m := strings.TrimRight(msg, " ")
	return strings.Contains(m, "unexpected status") && (strings.HasSuffix(m, ": 401") || strings.HasSuffix(m, ": 403"))
}

func anyFold(s string, lowers []string) bool {
	for _, m := range lowers {
		if ContainsFold(s, m) {
			return true
		}
	}
	return false
}

// kubeletCatchUp reports whether a CreateContainerConfigError message is one of the kubelet's own
// catch-up errors, which clear once its informers have synced after a (re)start rather than a
// missing secret or configmap:
//   - `failed to sync %s cache: ...` (pkg/kubelet/util/manager/watch_based_manager.go;
//     kubernetes/kubernetes#74755, #75260). Krane matches /failed to sync (.*?) cache/.
//   - `services have not yet been read at least once, cannot construct envvars`
//     (pkg/kubelet/kubelet_pods.go getServiceEnvVarMap).
//   - `object "ns"/"name" not registered` (pkg/kubelet/util/manager/watch_based_manager.go):
//     the pod's secret or configmap is not yet registered with the kubelet's object cache.
func kubeletCatchUp(msg string) bool {
	return cacheSyncFailure(msg) ||
		strings.Contains(msg, "services have not yet been read at least once") ||
		strings.Contains(msg, `object "`) && strings.Contains(msg, `" not registered`)
}

// cacheSyncFailure matches kubelet's `failed to sync %s cache`. Two index checks do what Krane's
// regexp does.
func cacheSyncFailure(msg string) bool {
	const head, tail = "failed to sync ", " cache"
	i := strings.Index(msg, head)
	if i < 0 {
		return false
	}
	return strings.Contains(msg[i+len(head):], tail)
}

// ContainsFold reports whether s contains lower under ASCII case folding, without allocating.
// lower must already be lower-case ASCII (strings.ToLower of a filter, or a fixed marker).
func ContainsFold(s, lower string) bool { return indexFold(s, lower) >= 0 }

// indexFold is strings.Index under ASCII case folding; lower must be lower-case ASCII.
func indexFold(s, lower string) int {
	n := len(lower)
	if n == 0 {
		return 0
	}
	c0 := lower[0]
outer:
	for i := 0; i+n <= len(s); i++ {
		if LowerASCII(s[i]) != c0 {
			continue
		}
		for j := 1; j < n; j++ {
			if LowerASCII(s[i+j]) != lower[j] {
				continue outer
			}
		}
		return i
	}
	return -1
}

// LowerASCII lower-cases one ASCII letter and returns any other byte unchanged.
func LowerASCII(b byte) byte {
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
