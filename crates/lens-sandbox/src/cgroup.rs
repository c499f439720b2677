//! One cgroup per running sandbox, for cgroup v1 (memory, pids and cpu hierarchies) and v2.
//!
//! Sandboxes nest under the server's own cgroup (from `/proc/self/cgroup`), in a folder
//! named after the driver's data directory, so they count against whatever budget the
//! server was given, two servers never touch each other's sandboxes, and a restarted
//! server finds and kills what its predecessor left.

use std::{
    fs,
    io::{self, Write},
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use nix::{sys::signal::Signal, unistd::Pid};

use crate::{Limits, SandboxError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// Where this driver's sandboxes' cgroups live.
#[derive(Debug, Clone)]
pub struct Cgroups {
    pub version: Version,
    /// (controller, folder); v2 has one ("unified", folder).
    bases: Vec<(&'static str, PathBuf)>,
}

/// The cgroup of one running sandbox (its folders' names: a clone names the same one).
#[derive(Debug, Clone)]
pub struct SandboxCgroup {
    version: Version,
    dirs: Vec<(&'static str, PathBuf)>,
}

const MOUNT: &str = "/sys/fs/cgroup";

/// Under v2, the leaf of the server's own cgroup that the server's processes move into.
const SERVER_LEAF: &str = "lens-server";

fn mkdir(dir: &Path) -> Result<(), SandboxError> {
    fs::create_dir_all(dir)
        .map_err(|e| SandboxError::Unavailable(format!("cannot make the cgroup {}: {e}", dir.display())))
}

/// The server's own cgroup paths: (controllers, path) per line of `/proc/self/cgroup`.
fn own_paths() -> io::Result<Vec<(String, String)>> {
    let text = fs::read_to_string("/proc/self/cgroup")?;
    Ok(text
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            Some((parts.next()?.to_string(), parts.next()?.to_string()))
        })
        .collect())
}

impl Cgroups {
    /// Finds the hierarchies and makes `<own cgroup>/<folder>` in each.
    pub fn detect(folder: &str) -> Result<Self, SandboxError> {
        let own = own_paths().map_err(|e| SandboxError::Unavailable(format!("cannot read /proc/self/cgroup: {e}")))?;
        Self::detect_at(Path::new(MOUNT), &own, folder)
    }

    /// [`Self::detect`] with the mount point and `/proc/self/cgroup`'s lines given.
    fn detect_at(mount: &Path, own: &[(String, String)], folder: &str) -> Result<Self, SandboxError> {
        if mount.join("cgroup.controllers").exists() {
            let path = own.iter().find(|(c, _)| c.is_empty()).map(|(_, p)| p.as_str()).unwrap_or("/");
            return Self::detect_v2(&mount.join(path.trim_start_matches('/')), folder);
        }
        let mut bases = Vec::new();
        for controller in ["memory", "pids", "cpu"] {
            let Some((names, path)) = own.iter().find(|(c, _)| c.split(',').any(|x| x == controller)) else {
                return Err(SandboxError::Unavailable(format!(
                    "the cgroup v1 `{controller}` controller is not mounted"
                )));
            };
            // The hierarchy's folder is named after its controllers ("cpu,cpuacct") or just one.
            let mut hierarchy = mount.join(names);
            if !hierarchy.exists() {
                hierarchy = mount.join(controller);
            }
            let base = hierarchy.join(path.trim_start_matches('/')).join(folder);
            mkdir(&base)?;
            bases.push((controller, base));
        }
        Ok(Self { version: Version::V1, bases })
    }

    /// v2 hands controllers down only from a cgroup that holds no process itself, so the
    /// server (with what it started) first moves into a leaf beside the sandboxes'
    /// folder; a server that moved already lives in that leaf and works from its parent.
    /// Processes that are not the server's stay where they are (a shell running `lens
    /// sandbox check` is not moved), and the error then says why.
    fn detect_v2(own: &Path, folder: &str) -> Result<Self, SandboxError> {
        let own = match own.file_name() {
            Some(name) if name == SERVER_LEAF => own.parent().unwrap_or(own),
            _ => own,
        };
        let ours = process_tree(std::process::id());
        let procs = fs::read_to_string(own.join("cgroup.procs")).unwrap_or_default();
        let (mine, others): (Vec<&str>, Vec<&str>) =
            procs.split_whitespace().partition(|p| p.parse().is_ok_and(|p: u32| ours.contains(&p)));
        if !mine.is_empty() {
            let leaf = own.join(SERVER_LEAF);
            mkdir(&leaf)?;
            for pid in mine {
                let moved = fs::OpenOptions::new()
                    .write(true)
                    .open(leaf.join("cgroup.procs"))
                    .and_then(|mut f| f.write_all(pid.as_bytes()));
                // A process that ended meanwhile cannot be moved, nor be in the way.
                if let Err(e) = moved
                    && Path::new("/proc").join(pid).exists()
                {
                    return Err(SandboxError::Unavailable(format!(
                        "cannot move process {pid} into {}: {e}",
                        leaf.display()
                    )));
                }
            }
        }
        let shared = if others.is_empty() {
            ""
        } else {
            " (other processes share Lens's cgroup: run Lens in one of its own, such as a systemd service with \
             Delegate=yes)"
        };
        let enable = |dir: &Path| {
            fs::write(dir.join("cgroup.subtree_control"), "+memory +pids +cpu").map_err(|e| {
                SandboxError::Unavailable(format!(
                    "cannot enable the memory, pids and cpu controllers in {}: {e}{shared}",
                    dir.display()
                ))
            })
        };
        enable(own)?;
        let base = own.join(folder);
        mkdir(&base)?;
        enable(&base)?;
        Ok(Self { version: Version::V2, bases: vec![("unified", base)] })
    }

    /// Makes (or reuses) a sandbox's cgroup with the limits applied.
    pub fn create(&self, name: &str, limits: &Limits) -> Result<SandboxCgroup, SandboxError> {
        let mut dirs = Vec::new();
        for (controller, base) in &self.bases {
            let dir = base.join(name);
            match fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(SandboxError::Unavailable(format!("cannot make the cgroup {}: {e}", dir.display())));
                }
            }
            dirs.push((*controller, dir));
        }
        let cgroup = SandboxCgroup { version: self.version, dirs };
        // Anything left in a reused cgroup belonged to a sandbox that is gone.
        cgroup.kill_all();
        cgroup.apply(limits).map_err(|e| SandboxError::Unavailable(format!("cannot set the sandbox's limits: {e}")))?;
        Ok(cgroup)
    }

    /// Kills and removes every sandbox cgroup: what a crashed server left behind.
    pub fn sweep(&self) -> usize {
        let mut names: Vec<String> = Vec::new();
        for (_, base) in &self.bases {
            for entry in fs::read_dir(base).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if entry.path().is_dir() && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        for name in &names {
            self.existing(name).remove();
        }
        names.len()
    }

    /// Sweeps, then removes the driver's own folders.
    pub fn remove_all(&self) {
        self.sweep();
        for (_, base) in &self.bases {
            let _ = fs::remove_dir(base);
        }
    }

    /// A sandbox's cgroup without creating or changing it.
    pub fn existing(&self, name: &str) -> SandboxCgroup {
        SandboxCgroup { version: self.version, dirs: self.bases.iter().map(|(c, b)| (*c, b.join(name))).collect() }
    }

    pub fn describe(&self) -> String {
        let version = match self.version {
            Version::V1 => "cgroup v1",
            Version::V2 => "cgroup v2",
        };
        format!("{version} under {}", self.bases.first().map(|(_, b)| b.display().to_string()).unwrap_or_default())
    }
}

fn read_u64(path: &Path) -> u64 {
    fs::read_to_string(path).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}

/// A `key value` line of a cgroup's flat-keyed file.
fn read_key(path: &Path, key: &str) -> u64 {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some(key)).then(|| words.next().and_then(|v| v.parse().ok())).flatten()
        })
        .unwrap_or(0)
}

impl SandboxCgroup {
    fn dir(&self, controller: &str) -> Option<&Path> {
        self.dirs.iter().find(|(c, _)| *c == controller || *c == "unified").map(|(_, d)| d.as_path())
    }

    fn apply(&self, limits: &Limits) -> io::Result<()> {
        let missing = || io::Error::other("controller missing");
        let memory = self.dir("memory").ok_or_else(missing)?;
        let pids = self.dir("pids").ok_or_else(missing)?;
        let cpu = self.dir("cpu").ok_or_else(missing)?;
        match self.version {
            Version::V1 => {
                fs::write(memory.join("memory.limit_in_bytes"), limits.memory_bytes.to_string())?;
                // Memory plus swap, where swap is accounted: no swapping around the limit.
                let _ = fs::write(memory.join("memory.memsw.limit_in_bytes"), limits.memory_bytes.to_string());
                let _ = fs::write(memory.join("memory.swappiness"), "0");
                fs::write(pids.join("pids.max"), limits.processes.to_string())?;
                fs::write(cpu.join("cpu.cfs_period_us"), "100000")?;
                fs::write(cpu.join("cpu.cfs_quota_us"), (limits.cpu_millis * 100).to_string())?;
            }
            Version::V2 => {
                fs::write(memory.join("memory.max"), limits.memory_bytes.to_string())?;
                let _ = fs::write(memory.join("memory.swap.max"), "0");
                fs::write(pids.join("pids.max"), limits.processes.to_string())?;
                fs::write(cpu.join("cpu.max"), format!("{} 100000", limits.cpu_millis * 100))?;
            }
        }
        Ok(())
    }

    /// Moves a process into the sandbox's cgroup in every hierarchy.
    pub fn add(&self, pid: u32) -> io::Result<()> {
        for (_, dir) in &self.dirs {
            let mut procs = fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs"))?;
            procs.write_all(pid.to_string().as_bytes())?;
        }
        Ok(())
    }

    /// How many times the kernel has killed a process here for want of memory.
    pub fn oom_kills(&self) -> u64 {
        match (self.version, self.dir("memory")) {
            (Version::V1, Some(d)) => read_key(&d.join("memory.oom_control"), "oom_kill"),
            (Version::V2, Some(d)) => read_key(&d.join("memory.events"), "oom_kill"),
            _ => 0,
        }
    }

    /// Memory charged to the sandbox now.
    pub fn memory_bytes(&self) -> u64 {
        match (self.version, self.dir("memory")) {
            (Version::V1, Some(d)) => read_u64(&d.join("memory.usage_in_bytes")),
            (Version::V2, Some(d)) => read_u64(&d.join("memory.current")),
            _ => 0,
        }
    }

    fn pids(&self) -> Vec<i32> {
        let Some(dir) = self.dir("pids") else { return Vec::new() };
        let text = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        text.lines().filter_map(|l| l.trim().parse().ok()).collect()
    }

    /// Kills everything in the cgroup until it is empty (v1 has no `cgroup.kill`, and a
    /// forking process can outrun a single pass).
    pub fn kill_all(&self) {
        if self.version == Version::V2
            && let Some(dir) = self.dir("unified")
        {
            let _ = fs::write(dir.join("cgroup.kill"), "1");
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let pids = self.pids();
            if pids.is_empty() || Instant::now() > deadline {
                break;
            }
            for pid in pids {
                let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Kills what is left and removes the cgroup (retrying: v1 may be busy for a moment
    /// while the last pages are uncharged).
    pub fn remove(&self) {
        self.kill_all();
        for (_, dir) in &self.dirs {
            for _ in 0..200 {
                match fs::remove_dir(dir) {
                    Ok(()) => break,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        }
    }
}

/// A process and all its descendants, from `/proc/<pid>/task/*/children`.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let tasks = Path::new("/proc").join(all[i].to_string()).join("task");
        for task in fs::read_dir(tasks).into_iter().flatten().flatten() {
            let children = fs::read_to_string(task.path().join("children")).unwrap_or_default();
            all.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
        i += 1;
    }
    all
}

#[cfg(test)]
mod tests {
    //! The files each version is written, against a plain folder standing in for the
    //! cgroup file system (this machine kind mounts v1 only, where the real kernel is
    //! exercised by the escape suite; these pin down what v2 gets).
    use super::*;

    fn read(path: PathBuf) -> String {
        fs::read_to_string(path).unwrap()
    }

    const LIMITS: Limits = Limits { memory_bytes: 256 << 20, processes: 64, cpu_millis: 500, disk_bytes: 0 };

    #[test]
    fn v2_gets_its_limits_in_one_folder_and_reports_oom_kills() {
        let root = tempfile::tempdir().unwrap();
        let cgroups = Cgroups { version: Version::V2, bases: vec![("unified", root.path().to_path_buf())] };
        let cgroup = cgroups.create("lens-chat-a", &LIMITS).unwrap();
        let dir = root.path().join("lens-chat-a");
        assert_eq!(read(dir.join("memory.max")), (256u64 << 20).to_string());
        assert_eq!(read(dir.join("memory.swap.max")), "0");
        assert_eq!(read(dir.join("pids.max")), "64");
        assert_eq!(read(dir.join("cpu.max")), "50000 100000", "half a core: 50 ms of every 100 ms");
        assert_eq!(read(dir.join("cgroup.kill")), "1", "a reused cgroup is emptied at once");
        fs::write(dir.join("memory.events"), "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\noom_group_kill 0\n").unwrap();
        fs::write(dir.join("memory.current"), "5242880\n").unwrap();
        assert_eq!((cgroup.oom_kills(), cgroup.memory_bytes()), (2, 5 << 20));
    }

    /// A v2 mount as the kernel shows it to a systemd service: the service's cgroup holds
    /// its processes; the stand-in's `cgroup.procs` files are plain files.
    fn v2_mount(procs: &str) -> (tempfile::TempDir, PathBuf) {
        let mount = tempfile::tempdir().unwrap();
        fs::write(mount.path().join("cgroup.controllers"), "cpu memory pids\n").unwrap();
        let own = mount.path().join("system.slice/lens.service");
        fs::create_dir_all(own.join(SERVER_LEAF)).unwrap();
        fs::write(own.join("cgroup.procs"), procs).unwrap();
        fs::write(own.join(SERVER_LEAF).join("cgroup.procs"), "").unwrap();
        (mount, own)
    }

    #[test]
    fn v2_moves_the_servers_processes_into_a_leaf_then_hands_controllers_down() {
        let me = std::process::id();
        let (mount, own) = v2_mount(&format!("1\n{me}\n"));
        let lines = vec![(String::new(), "/system.slice/lens.service".to_string())];
        let cgroups = Cgroups::detect_at(mount.path(), &lines, "lens-abc").unwrap();
        assert_eq!(cgroups.version, Version::V2);
        assert_eq!(read(own.join(SERVER_LEAF).join("cgroup.procs")), me.to_string(), "the server moved, pid 1 did not");
        assert_eq!(read(own.join("cgroup.subtree_control")), "+memory +pids +cpu");
        assert_eq!(read(own.join("lens-abc/cgroup.subtree_control")), "+memory +pids +cpu");
        assert_eq!(cgroups.bases, vec![("unified", own.join("lens-abc"))]);

        // Detected again (settings applied anew), the server is in the leaf: same folder.
        let moved = vec![(String::new(), format!("/system.slice/lens.service/{SERVER_LEAF}"))];
        let again = Cgroups::detect_at(mount.path(), &moved, "lens-abc").unwrap();
        assert_eq!(again.bases, cgroups.bases);
    }

    #[test]
    fn v1_gets_its_limits_per_controller() {
        let root = tempfile::tempdir().unwrap();
        let base = |c: &str| root.path().join(c);
        let cgroups = Cgroups {
            version: Version::V1,
            bases: vec![("memory", base("memory")), ("pids", base("pids")), ("cpu", base("cpu"))],
        };
        for c in ["memory", "pids", "cpu"] {
            fs::create_dir(base(c)).unwrap();
        }
        let cgroup = cgroups.create("lens-chat-b", &LIMITS).unwrap();
        let dir = |c: &str| base(c).join("lens-chat-b");
        assert_eq!(read(dir("memory").join("memory.limit_in_bytes")), (256u64 << 20).to_string());
        assert_eq!(read(dir("pids").join("pids.max")), "64");
        assert_eq!(read(dir("cpu").join("cpu.cfs_quota_us")), "50000");
        assert_eq!(read(dir("cpu").join("cpu.cfs_period_us")), "100000");
        fs::write(dir("memory").join("memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n").unwrap();
        assert_eq!(cgroup.oom_kills(), 3);
    }
}
