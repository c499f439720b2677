//! Keeps the agent out of reach of the code it runs.
//!
//! Both run as the same uid inside the sandbox, so the uid is no wall. Instead:
//! - every program the agent starts (a command, the Python kernel) enters a Landlock
//!   domain one level below the agent's. A process may signal and ptrace only processes
//!   in its own domain or below it, so user code cannot stop, kill or trace the agent,
//!   read its memory or open its pipes through `/proc/<pid>/fd` (ptrace access checks);
//! - the agent is not dumpable, a second wall for the same `/proc` files;
//! - the agent resets every signal to its default before it starts anything, so a server
//!   started with SIGINT ignored (`nohup`, a service manager) does not hand that on to the
//!   Python kernel, whose interrupt is SIGINT.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::error::AgentError;

/// `struct landlock_ruleset_attr` of Landlock ABI 6 (with `scoped`).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// Making block devices: a right no program in a sandbox needs, handled so that the
/// ruleset is valid on kernels without scopes too (a domain then still blocks ptrace).
const ACCESS_FS_MAKE_BLOCK: u64 = 1 << 11;
/// Linking or moving a file into another folder. Landlock refuses it in every domain
/// that does not grant it by a rule, handled or not (EXDEV: `ln a/f b/f`, npm's cache,
/// `git` fail), so the programs' domain handles it and grants it everywhere: what may be
/// written, and so linked, is the agent's own domain's to say.
const ACCESS_FS_REFER: u64 = 1 << 13;
const RULE_PATH_BENEATH: u32 = 1;

/// `struct landlock_path_beneath_attr` (packed, as the kernel reads it).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

/// The ruleset every started program restricts itself with, made once.
pub struct UserDomain {
    ruleset: OwnedFd,
    /// Whether signals are scoped (Landlock ABI 6, Linux 6.12).
    pub signals_scoped: bool,
}

impl UserDomain {
    /// Makes the ruleset; `Err` when the kernel has no Landlock at all.
    pub fn new() -> Result<Self, AgentError> {
        let scoped = RulesetAttr {
            handled_access_fs: ACCESS_FS_MAKE_BLOCK | ACCESS_FS_REFER,
            handled_access_net: 0,
            scoped: SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET,
        };
        let (ruleset, signals_scoped) = match create_ruleset(&scoped, std::mem::size_of::<RulesetAttr>()) {
            Ok(ruleset) => (ruleset, true),
            Err(_) => {
                // Before ABI 6 the kernel knows only the first two fields.
                let plain = RulesetAttr { scoped: 0, ..scoped };
                let ruleset = create_ruleset(&plain, 2 * std::mem::size_of::<u64>()).map_err(|source| {
                    AgentError::System { call: "landlock_create_ruleset (the programs' domain)", source }
                })?;
                (ruleset, false)
            }
        };
        // O_PATH: a sandbox may refuse reading `/` itself (NVIDIA's supervisor does).
        let root = std::os::unix::fs::OpenOptionsExt::custom_flags(
            std::fs::OpenOptions::new().read(true),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
        .open("/")
        .map_err(|source| AgentError::System { call: "open / (the programs' domain)", source })?;
        let refer = PathBeneathAttr { allowed_access: ACCESS_FS_REFER, parent_fd: root.as_raw_fd() };
        // SAFETY: `refer` is a live, packed `landlock_path_beneath_attr` the call only
        // reads; both descriptors are open for its length.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_PATH_BENEATH,
                &refer as *const PathBeneathAttr,
                0u32,
            )
        };
        if rc < 0 {
            let source = std::io::Error::last_os_error();
            return Err(AgentError::System { call: "landlock_add_rule (the programs' domain)", source });
        }
        Ok(Self { ruleset, signals_scoped })
    }

    /// The ruleset's descriptor, for [`enter`] in a forked child.
    pub fn fd(&self) -> RawFd {
        self.ruleset.as_raw_fd()
    }
}

fn create_ruleset(attr: &RulesetAttr, size: usize) -> std::io::Result<OwnedFd> {
    // SAFETY: `attr` points to a live `RulesetAttr` of at least `size` bytes; the call
    // only reads it and returns a new descriptor (close-on-exec) or -1.
    let fd = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, attr as *const RulesetAttr, size, 0u32) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Puts the calling process into the programs' domain. Meant for `pre_exec`: one raw
/// system call, no allocation, so it is safe between fork and exec.
pub fn enter(ruleset: RawFd) -> std::io::Result<()> {
    // SAFETY: a plain system call on a descriptor this process holds; it touches no memory.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) };
    if rc < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
}

/// Every signal back to its default disposition, except SIGPIPE, which the agent keeps
/// ignored so that a server gone away is an error to write, not a death (the standard
/// library puts SIGPIPE back to the default in every child it starts).
pub fn reset_signals() {
    let all = 1..=libc::SIGRTMAX();
    for signal in all.filter(|&s| s != libc::SIGKILL && s != libc::SIGSTOP && s != libc::SIGPIPE) {
        // SAFETY: installing the default disposition has no handler to be unsafe about;
        // signals the C library keeps for itself refuse with EINVAL, which is fine.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
}

/// No core dumps, no ptrace and no `/proc/<pid>/mem` or `fd` of the agent for anyone
/// without privileges over it.
pub fn make_undumpable() -> Result<(), AgentError> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    if rc < 0 { Err(AgentError::last_os("PR_SET_DUMPABLE")) } else { Ok(()) }
}
