//! The agent confines itself before it reads a single request, and everything it starts
//! inherits the confinement: rlimits, `no_new_privs`, Landlock, then seccomp.
//!
//! bubblewrap has already built the mount namespace by then (Landlock forbids mounting
//! once applied, which is why the agent, not bwrap, applies it). Landlock is the second
//! wall behind the mounts: whatever is visible may be read and run, but only the
//! workspace, `/tmp` and `/dev/shm` may be written. The agent refuses to start on a
//! kernel below Landlock ABI 3, where truncation could not be controlled.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};
use nix::sys::resource::{Resource, setrlimit};

use crate::{error::AgentError, seccomp_policy};

/// What the agent managed to apply, reported to the server in its first frame.
pub struct Confinement {
    /// The Landlock ABI in use (3 or more).
    pub landlock_abi: u32,
    /// Whether every requested Landlock right is enforced (ABI 6 or more).
    pub landlock_full: bool,
    /// Whether the agent's own seccomp allow-list is in force.
    pub seccomp: bool,
    /// Seccomp filters the sandbox had installed before the agent's.
    pub seccomp_inherited: u32,
}

/// Per-process limits; the cgroup is the guard on the sandbox as a whole.
pub struct ProcessLimits {
    /// The largest file a process may write: the workspace's disk quota.
    pub max_file_bytes: u64,
    pub max_open_files: u64,
}

/// Confines this process for good. `writable` are the folders it may write.
pub fn confine(writable: &[&Path], limits: &ProcessLimits) -> Result<Confinement, AgentError> {
    let set = |resource, value| {
        setrlimit(resource, value, value).map_err(|e| AgentError::System { call: "setrlimit", source: e.into() })
    };
    set(Resource::RLIMIT_CORE, 0)?;
    set(Resource::RLIMIT_NOFILE, limits.max_open_files)?;
    set(Resource::RLIMIT_FSIZE, limits.max_file_bytes)?;
    nix::sys::prctl::set_no_new_privs().map_err(|e| AgentError::System { call: "no_new_privs", source: e.into() })?;
    let (landlock_abi, landlock_full) = landlock(writable)?;
    let seccomp = seccomp_policy::apply()?;
    Ok(Confinement { landlock_abi, landlock_full, seccomp: seccomp.own, seccomp_inherited: seccomp.inherited })
}

fn landlock(writable: &[&Path]) -> Result<(u32, bool), AgentError> {
    let newest = ABI::V6;
    let ruleset = Ruleset::default()
        // ABI 3 is the floor: without it, truncating a read-only file could not be refused.
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))
        .map_err(|_| {
            AgentError::Unsupported("the kernel's Landlock is older than ABI 3 (Linux 6.2); the sandbox needs it")
        })?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(newest))?
        // ABI 6: no signals to, and no abstract sockets of, anything outside the sandbox.
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    let mut created = ruleset.create()?;
    let read = AccessFs::from_read(newest);
    // Everything mounted may be read and run: the mount namespace decides what exists.
    created = created.add_rule(PathBeneath::new(PathFd::new("/")?, read))?;
    // Device nodes may be used (/dev/null, /dev/urandom) but nothing made in /dev.
    if let Ok(dev) = PathFd::new("/dev") {
        let use_devices = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
        created = created.add_rule(PathBeneath::new(dev, use_devices))?;
    }
    for dir in writable {
        if let Ok(fd) = PathFd::new(dir) {
            created = created.add_rule(PathBeneath::new(fd, AccessFs::from_all(newest)))?;
        }
    }
    let status = created.restrict_self()?;
    let abi = match status.landlock {
        LandlockStatus::Available { kernel_abi: Some(abi), .. } => abi.max(0) as u32,
        LandlockStatus::Available { effective_abi, .. } => effective_abi as u32,
        _ => 0,
    };
    match status.ruleset {
        RulesetStatus::NotEnforced => Err(AgentError::Unsupported("Landlock is not enforced on this kernel")),
        RulesetStatus::PartiallyEnforced => Ok((abi, false)),
        RulesetStatus::FullyEnforced => Ok((abi, true)),
    }
}
