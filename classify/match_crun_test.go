package classify

import "testing"

// TestCommandErrorCrun pins crun's wordings (CRI-O's default OCI runtime since CRI-O 1.31,
// pkg/config/config_linux.go DefaultRuntime): its errors about the container's command or working
// directory doom the container, and its errors about the node, which carry the same errno texts
// after a path, do not. CRI-O returns each as `container create failed: %s` (cri-o/cri-o
// internal/oci/runtime_oci.go CreateContainer). Each message is copied from the source beside
// it, or formatted as the crun code named there formats it, with the placeholder filled in from
// the source named.
func TestCommandErrorCrun(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want bool
	}{
		// The command (find_executable, src/libcrun/utils.c since 1.21; fixtures
		// rt-crio-crun121-executable-not-found, rt-crio-crun121-not-executable).
		{"1.21+ absolute command not found", "container create failed: executable file `/app/serve` not found: No such file or directory", true},
		{"1.21+ command not executable", "container create failed: the path `/app/serve` exists but it is not executable: Operation not permitted", true},
		// The command containers/crun#1694 runs, /etc, in 1.21+'s words for a directory.
		{"1.21+ command is a directory", "container create failed: the path `/etc` is not a regular file: Operation not permitted", true},
		// Before 1.21 (src/libcrun/container.c container_init_setup); containers/crun#1694.
		{"open executable EPERM", "container create failed: open executable: Operation not permitted", true},
		// containers/crun#1664 (crun text; podman's "crun: " prefix and suffix dropped).
		{"not on $PATH, odd name", "container create failed: executable file `...test` not found in $PATH: No such file or directory", true},

		// The working directory: libcrun_safe_chdir (src/libcrun/linux.c, 1.14.1+), text from
		// podman-container-tools/buildah#6308; container_init_setup (src/libcrun/container.c, 1.4
		// to 1.14) with woodpecker-ci/woodpecker#2510's workingDir.
		{"1.14.1+ chdir to cwd", "container create failed: chdir to `/app`: Not a directory", true},
		{"1.4 chdir cwd", "container create failed: chdir `/woodpecker/src`: No such file or directory", true},

		// The node. containers/crun#275 (pod status) and containers/crun#1589 (CRI-O log): cgroup
		// errors on a sick node.
		{"cgroup mount ENOENT", "container create failed: mount `/sys/fs/cgroup/devices//docker/e8abdf947d3c3f27dcd40874224605cbacebaa978f1ada7644ce0d4a86cd9b53` to '/home/user/.local/share/containers/storage/vfs/dir/fa622496b8a0cb247bb4e31572835e449a3299e4ef1936c317ec80c9e7bd6c0b/sys/fs/cgroup/devices': No such file or directory", false},
		{"cgroup devices.allow EPERM", "container create failed: writing file `devices.allow`: Operation not permitted\n", false},
		// cri-o/cri-o#4833 (CRI-O log, the infra container).
		{"cgroup directory ENOENT", "container create failed: creating cgroup directory `/sys/fs/cgroup/net_prio,net_cls/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podb6c7cb425bef80bb327583bad4f8a302.slice/crio-e843b741b52c8e2699437978276a0fff1218b0c7d4151047072bb916e27ef7e7.scope`: No such file or directory\n", false},
		// containers/crun#2193 (crun 1.29.1 text; podman's prefix and suffix dropped).
		{"cgroup.freeze ENOENT", "container create failed: open /sys/fs/cgroup/machine.slice/libpod-35ee2efacd4845ab7cf1f4ca85de14a673211be07f053fc891a4630100a80ca0.scope/container/cgroup.freeze: No such file or directory", false},
		// podman-container-tools/podman#25080 (crun text): crun's "open `%s`" of a node path,
		// the form 1.21+ also uses for other lookup errors of the command.
		{"open rootfs EACCES", "container create failed: open `/home/u1/.local/share/containers/storage/overlay/123/merged`: Permission denied", false},

		// crun's own moves on the node, in the working directory's words. The rootfs is the one
		// containers/crun#704's log mounts; the bundle (crun's cwd, src/run_create.c) is
		// containers/crun#1745's.
		{"move_root chdir to rootfs", "container create failed: chdir to `/var/lib/containers/storage/overlay/3a07f591d89574dba11360c63b29afa637fceb5ffa957449c3a430b325e6c973/merged`: No such file or directory", false},
		{"do_pivot fchdir rootfs", "container create failed: fchdir `/var/lib/containers/storage/overlay/3a07f591d89574dba11360c63b29afa637fceb5ffa957449c3a430b325e6c973/merged`: No such file or directory", false},
		{"chdir to / after pivot", "container create failed: chdir to `/`: No such file or directory", false},
		{"join_namespaces chdir(.)", "container create failed: chdir(.): No such file or directory", false},
		{"join_namespaces chdir host cwd", "container create failed: chdir `/run/containers/storage/overlay-containers/aee74d45809c27c85df2bea56273be6218bf07cbb6452c4d2302274a6ab3c9a6/userdata`: No such file or directory", false},
		{"chdir to bundle", "container create failed: chdir `/run/containers/storage/overlay-containers/aee74d45809c27c85df2bea56273be6218bf07cbb6452c4d2302274a6ab3c9a6/userdata` failed: No such file or directory", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commandError(tt.msg); got != tt.want {
				t.Errorf("commandError(%q) = %v, want %v", tt.msg, got, tt.want)
			}
		})
	}
	for _, tt := range tests {
		msg := tt.msg
		if n := testing.AllocsPerRun(20, func() { commandError(msg) }); n != 0 {
			t.Errorf("commandError(%q) allocates %v times", msg, n)
		}
	}
}

// BenchmarkCommandErrorCrun is the scan on a long crun cgroup error (containers/crun#275's pod
// status message), which has no command error: every marker is looked for and none found.
func BenchmarkCommandErrorCrun(b *testing.B) {
	const msg = "container create failed: mount `/sys/fs/cgroup/devices//docker/e8abdf947d3c3f27dcd40874224605cbacebaa978f1ada7644ce0d4a86cd9b53` to '/home/user/.local/share/containers/storage/vfs/dir/fa622496b8a0cb247bb4e31572835e449a3299e4ef1936c317ec80c9e7bd6c0b/sys/fs/cgroup/devices': No such file or directory"
	b.ReportAllocs()
	for b.Loop() {
		if commandError(msg) {
			b.Fatal("a cgroup error read as a command error")
		}
	}
}
