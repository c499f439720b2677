//! The fake's containers, when it is asked to contain: each sandbox gets a cgroup of its
//! own (the memory limit from its spec's resources, a cap on processes), and each of its
//! commands runs inside bubblewrap as an unprivileged user, with the sandbox's home at
//! `/sandbox`, a fresh `/tmp`, no network, its own process and user namespaces, and the
//! cgroup's memory files at `/sys/fs/cgroup`, where a process in a Docker container
//! sees its own. That is what hostile code meets on a gateway's Docker driver, so the
//! attacks Lens's tests make on this machine's sandbox can be made through the gateway
//! driver too. It needs root (to make cgroups and run as another user) and bubblewrap.

use std::{
    fs,
    path::{Path, PathBuf},
};

use super::FakeError;

/// The unprivileged host user the containers' processes run as.
const HOST_UID: u32 = 65534;

/// Processes one container may hold: a fork bomb stays inside it.
const MAX_PROCESSES: u32 = 256;

const MOUNT: &str = "/sys/fs/cgroup";

/// The descriptor bubblewrap reads the supervisor's seccomp filter from.
const SECCOMP_FD: i32 = 9;

/// A filter as NVIDIA's supervisor installs its own (`openshell-supervisor-process`,
/// `seccomp.rs`): among its refusals, `seccomp(SECCOMP_SET_MODE_FILTER)` is EPERM, so no
/// program in the sandbox can install a filter of its own that way. Compiled once, as
/// the raw `struct sock_filter` array bubblewrap's `--seccomp` takes.
fn supervisor_filter() -> &'static [u8] {
    static FILTER: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    FILTER.get_or_init(|| {
        use seccompiler::{
            SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
        };
        let set_mode_filter = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, 1)
            .and_then(|c| SeccompRule::new(vec![c]))
            .expect("a fixed condition");
        let rules = [(nix::libc::SYS_seccomp, vec![set_mode_filter])].into_iter().collect();
        let arch = std::env::consts::ARCH.try_into().expect("an architecture seccompiler knows");
        let filter =
            SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(nix::libc::EPERM as u32), arch)
                .expect("a fixed filter");
        let program: seccompiler::BpfProgram = filter.try_into().expect("it compiles");
        program
            .iter()
            .flat_map(|i| {
                let mut raw = Vec::with_capacity(8);
                raw.extend_from_slice(&i.code.to_ne_bytes());
                raw.extend([i.jt, i.jf]);
                raw.extend_from_slice(&i.k.to_ne_bytes());
                raw
            })
            .collect()
    })
}

/// A folder with the supervisor's filter in it, readable by the containers' user.
fn filter_folder() -> Result<tempfile::TempDir, FakeError> {
    use std::os::unix::fs::PermissionsExt;
    let files = tempfile::tempdir().map_err(FakeError::io("a temporary folder"))?;
    fs::set_permissions(files.path(), fs::Permissions::from_mode(0o755)).map_err(FakeError::io("its mode"))?;
    let path = files.path().join("filter.bpf");
    fs::write(&path, supervisor_filter()).map_err(FakeError::io("the seccomp filter"))?;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).map_err(FakeError::io("its mode"))?;
    Ok(files)
}

/// Where one fake gateway's containers' cgroups live.
#[derive(Debug)]
pub(crate) struct Containers {
    /// v2: the unified folder alone; v1: the memory folder, then the pids folder.
    bases: Vec<PathBuf>,
    v2: bool,
    /// Holds the supervisor's seccomp filter, `filter.bpf`.
    files: tempfile::TempDir,
}

/// One sandbox's container.
#[derive(Debug)]
pub(crate) struct Container {
    dirs: Vec<PathBuf>,
    v2: bool,
    /// The supervisor's seccomp filter, as a file.
    filter: PathBuf,
}

/// The cgroup path of this process for `controller` ("" for v2's unified line).
fn own_path(controller: &str) -> Option<String> {
    let text = fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        let found = if controller.is_empty() { names.is_empty() } else { names.split(',').any(|n| n == controller) };
        found.then(|| path.trim_start_matches('/').to_owned())
    })
}

fn make(dir: &Path) -> Result<(), FakeError> {
    fs::create_dir_all(dir).map_err(FakeError::io(format_args!("cannot make the cgroup {}", dir.display())))
}

impl Containers {
    /// Makes `lens-fake-<folder>` beside this process's own cgroups.
    pub(crate) fn new(folder: &str) -> Result<Self, FakeError> {
        if !nix::unistd::geteuid().is_root() {
            return Err(FakeError::Unsupported(
                "the fake gateway contains its sandboxes only when it runs as root".into(),
            ));
        }
        let folder = format!("lens-fake-{folder}");
        let mount = Path::new(MOUNT);
        if mount.join("cgroup.controllers").exists() {
            let own = mount.join(own_path("").unwrap_or_default());
            // v2 hands controllers only to a cgroup's children when it holds no process.
            fs::write(own.join("cgroup.subtree_control"), "+memory +pids").map_err(FakeError::io(format_args!(
                "cannot hand the memory and pids controllers down from {}",
                own.display()
            )))?;
            let base = own.join(folder);
            make(&base)?;
            fs::write(base.join("cgroup.subtree_control"), "+memory +pids")
                .map_err(FakeError::io(format_args!("cannot hand controllers down in {}", base.display())))?;
            return Ok(Self { bases: vec![base], v2: true, files: filter_folder()? });
        }
        let mut bases = Vec::new();
        for controller in ["memory", "pids"] {
            let path = own_path(controller)
                .ok_or_else(|| FakeError::Unsupported(format!("the cgroup `{controller}` controller is missing")))?;
            let base = mount.join(controller).join(path).join(&folder);
            make(&base)?;
            bases.push(base);
        }
        Ok(Self { bases, v2: false, files: filter_folder()? })
    }

    /// A container for sandbox `name`, holding at most `memory` bytes.
    pub(crate) fn create(&self, name: &str, memory: Option<u64>) -> Result<Container, FakeError> {
        let dirs: Vec<PathBuf> = self.bases.iter().map(|b| b.join(name)).collect();
        for dir in &dirs {
            make(dir)?;
        }
        let set = |dir: &Path, file: &str, value: String| {
            fs::write(dir.join(file), value).map_err(FakeError::io(format_args!("cannot set {file}")))
        };
        let memory = memory.map(|m| m.to_string());
        if self.v2 {
            if let Some(m) = &memory {
                set(&dirs[0], "memory.max", m.clone())?;
                // No swap: a container over its limit is killed, not slowed to a crawl.
                let _ = set(&dirs[0], "memory.swap.max", "0".into());
            }
            set(&dirs[0], "pids.max", MAX_PROCESSES.to_string())?;
        } else {
            if let Some(m) = &memory {
                set(&dirs[0], "memory.limit_in_bytes", m.clone())?;
                let _ = set(&dirs[0], "memory.memsw.limit_in_bytes", m.clone());
            }
            set(&dirs[1], "pids.max", MAX_PROCESSES.to_string())?;
        }
        Ok(Container { dirs, v2: self.v2, filter: self.files.path().join("filter.bpf") })
    }
}

impl Drop for Containers {
    fn drop(&mut self) {
        for base in &self.bases {
            let _ = fs::remove_dir(base);
        }
    }
}

/// Makes `dir` (a sandbox's home) the containers' user's, and its parents passable.
pub(crate) fn hand_over(dir: &Path) -> Result<(), FakeError> {
    use std::os::unix::fs::PermissionsExt;
    let uid = Some(nix::unistd::Uid::from_raw(HOST_UID));
    let gid = Some(nix::unistd::Gid::from_raw(HOST_UID));
    nix::unistd::chown(dir, uid, gid)
        .map_err(|e| FakeError::Io { what: format!("cannot hand {} over", dir.display()), source: e.into() })?;
    if let Some(parent) = dir.parent() {
        let mut mode = fs::metadata(parent).map_err(FakeError::io(parent.display()))?.permissions();
        mode.set_mode(mode.mode() | 0o711);
        fs::set_permissions(parent, mode).map_err(FakeError::io(parent.display()))?;
    }
    Ok(())
}

impl Container {
    /// `command` to run in `workdir` (a path inside, under `/sandbox`) in this container:
    /// a shell moves itself into the cgroup, then becomes the unprivileged user and
    /// bubblewrap, so nothing the command starts is ever outside the cgroup.
    /// `before` (the filesystem policy's Landlock, when it has paths) runs first and
    /// becomes the command.
    pub(crate) fn command(
        &self,
        home: &Path,
        workdir: &str,
        before: Option<&[String]>,
        command: &[String],
    ) -> tokio::process::Command {
        let procs: Vec<String> = self.dirs.iter().map(|d| d.join("cgroup.procs").display().to_string()).collect();
        let uid = HOST_UID.to_string();
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args(["-c", MOVE_THEN_BECOME, "sh"]).arg(&self.filter).arg(procs.len().to_string()).args(&procs);
        cmd.args(["setpriv", &format!("--reuid={uid}"), &format!("--regid={uid}"), "--clear-groups", "--", "bwrap"]);
        cmd.args(["--unshare-user", "--uid", "1000", "--gid", "1000", "--unshare-pid", "--unshare-ipc"]);
        cmd.args(["--unshare-uts", "--unshare-net", "--unshare-cgroup-try", "--hostname", "sandbox"]);
        cmd.args(["--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]);
        for (link, target) in [("/bin", "usr/bin"), ("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/sbin", "usr/sbin")]
        {
            cmd.args(["--symlink", target, link]);
        }
        cmd.args(["--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev"]);
        cmd.args(["--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "--bind"]).arg(home).arg("/sandbox");
        // The supervisor's seccomp filter, or the part of it Lens meets: no further filter
        // through seccomp(2). bubblewrap loads it from the descriptor the shell opened.
        cmd.args(["--seccomp", &SECCOMP_FD.to_string()]);
        // Where a container sees its own cgroup: v2 at the mount point, v1 per controller.
        let inside = if self.v2 { MOUNT.to_owned() } else { format!("{MOUNT}/memory") };
        cmd.arg("--ro-bind").arg(&self.dirs[0]).arg(inside);
        cmd.args(["--chdir", workdir, "--"]).args(before.unwrap_or_default()).args(command);
        cmd
    }

    /// Kills every process in the container.
    pub(crate) fn kill_all(&self) {
        for _ in 0..20 {
            let pids = fs::read_to_string(self.dirs[0].join("cgroup.procs")).unwrap_or_default();
            let pids: Vec<i32> = pids.split_whitespace().filter_map(|p| p.parse().ok()).collect();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        self.kill_all();
        for dir in &self.dirs {
            // Empty once its processes are reaped; a moment later on a busy machine.
            for _ in 0..50 {
                if fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

/// `sh -c` script: `$1` cgroup.procs files follow, then the command to become.
const MOVE_THEN_BECOME: &str = "exec 9< \"$1\" || exit 125; shift; n=$1; shift; while [ \"$n\" -gt 0 ]; do echo $$ > \"$1\" || exit 125; shift; n=$((n-1)); done; exec \"$@\"";

/// A Kubernetes-style quantity in bytes: digits, with an optional binary or decimal suffix.
pub(crate) fn quantity(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (n, unit) = text.split_at(digits);
    let scale: u64 = match unit {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        _ => return None,
    };
    n.parse::<u64>().ok()?.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    #[test]
    fn quantities_read_as_kubernetes_writes_them() {
        use super::quantity;
        assert_eq!(quantity("268435456"), Some(256 << 20));
        assert_eq!(quantity("256Mi"), Some(256 << 20));
        assert_eq!(quantity("1G"), Some(1_000_000_000));
        assert_eq!((quantity("lots"), quantity("")), (None, None));
    }
}
