//! The seccomp allow-list the agent applies to itself and everything it starts (x86_64).
//!
//! An allow-list (default `EPERM`) modelled on Docker's default profile, minus whatever
//! changes namespaces or mounts, loads kernel code, or is a large kernel attack surface:
//! `bpf`, `io_uring`, `userfaultfd`, `perf_event_open`, `keyctl`, `ptrace`,
//! `process_vm_*`, the mount API, `unshare`, `setns`. An allow-list is also safe from
//! the x32 syscall-number trick that a deny-list would have to handle.
//!
//! A second filter turns `clone3` into `ENOSYS`, so the C library falls back to
//! `clone(2)`, whose flags a filter can read (`clone3` passes them in memory).

#[cfg(target_arch = "x86_64")]
mod x86_64 {
    use std::collections::BTreeMap;

    use crate::error::AgentError;

    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond,
        SeccompFilter, SeccompRule, TargetArch,
    };

    const ALLOW: &[i64] = &[
        libc::SYS_accept,
        libc::SYS_accept4,
        libc::SYS_access,
        libc::SYS_alarm,
        libc::SYS_arch_prctl,
        libc::SYS_bind,
        libc::SYS_brk,
        libc::SYS_capget,
        libc::SYS_capset,
        libc::SYS_chdir,
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_clock_getres,
        libc::SYS_clock_gettime,
        libc::SYS_clock_nanosleep,
        libc::SYS_close,
        libc::SYS_close_range,
        libc::SYS_connect,
        libc::SYS_copy_file_range,
        libc::SYS_creat,
        libc::SYS_dup,
        libc::SYS_dup2,
        libc::SYS_dup3,
        libc::SYS_epoll_create,
        libc::SYS_epoll_create1,
        libc::SYS_epoll_ctl,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
        libc::SYS_epoll_wait,
        libc::SYS_eventfd,
        libc::SYS_eventfd2,
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_exit,
        libc::SYS_exit_group,
        libc::SYS_faccessat,
        libc::SYS_faccessat2,
        libc::SYS_fadvise64,
        libc::SYS_fallocate,
        libc::SYS_fchdir,
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        452, /* fchmodat2 */
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_fcntl,
        libc::SYS_fdatasync,
        libc::SYS_fgetxattr,
        libc::SYS_flistxattr,
        libc::SYS_flock,
        libc::SYS_fork,
        libc::SYS_fremovexattr,
        libc::SYS_fsetxattr,
        libc::SYS_fstat,
        libc::SYS_fstatfs,
        libc::SYS_fsync,
        libc::SYS_ftruncate,
        libc::SYS_futex,
        libc::SYS_futex_waitv,
        libc::SYS_futimesat,
        libc::SYS_get_mempolicy,
        libc::SYS_get_robust_list,
        libc::SYS_getcpu,
        libc::SYS_getcwd,
        libc::SYS_getdents,
        libc::SYS_getdents64,
        libc::SYS_getegid,
        libc::SYS_geteuid,
        libc::SYS_getgid,
        libc::SYS_getgroups,
        libc::SYS_getitimer,
        libc::SYS_getpeername,
        libc::SYS_getpgid,
        libc::SYS_getpgrp,
        libc::SYS_getpid,
        libc::SYS_getppid,
        libc::SYS_getpriority,
        libc::SYS_getrandom,
        libc::SYS_getresgid,
        libc::SYS_getresuid,
        libc::SYS_getrlimit,
        libc::SYS_getrusage,
        libc::SYS_getsid,
        libc::SYS_getsockname,
        libc::SYS_getsockopt,
        libc::SYS_gettid,
        libc::SYS_gettimeofday,
        libc::SYS_getuid,
        libc::SYS_getxattr,
        libc::SYS_inotify_add_watch,
        libc::SYS_inotify_init,
        libc::SYS_inotify_init1,
        libc::SYS_inotify_rm_watch,
        libc::SYS_io_cancel,
        libc::SYS_io_destroy,
        libc::SYS_io_getevents,
        333, /* io_pgetevents */
        libc::SYS_io_setup,
        libc::SYS_io_submit,
        libc::SYS_ioprio_get,
        libc::SYS_kill,
        libc::SYS_landlock_add_rule,
        libc::SYS_landlock_create_ruleset,
        libc::SYS_landlock_restrict_self,
        libc::SYS_lchown,
        libc::SYS_lgetxattr,
        libc::SYS_link,
        libc::SYS_linkat,
        libc::SYS_listen,
        libc::SYS_listxattr,
        libc::SYS_llistxattr,
        libc::SYS_lremovexattr,
        libc::SYS_lseek,
        libc::SYS_lsetxattr,
        libc::SYS_lstat,
        libc::SYS_madvise,
        libc::SYS_mbind,
        libc::SYS_membarrier,
        libc::SYS_memfd_create,
        libc::SYS_mincore,
        libc::SYS_mkdir,
        libc::SYS_mkdirat,
        libc::SYS_mlock,
        libc::SYS_mlock2,
        libc::SYS_mlockall,
        libc::SYS_mmap,
        libc::SYS_mprotect,
        libc::SYS_mq_getsetattr,
        libc::SYS_mq_notify,
        libc::SYS_mq_open,
        libc::SYS_mq_timedreceive,
        libc::SYS_mq_timedsend,
        libc::SYS_mq_unlink,
        libc::SYS_mremap,
        libc::SYS_msgctl,
        libc::SYS_msgget,
        libc::SYS_msgrcv,
        libc::SYS_msgsnd,
        libc::SYS_msync,
        libc::SYS_munlock,
        libc::SYS_munlockall,
        libc::SYS_munmap,
        libc::SYS_nanosleep,
        libc::SYS_newfstatat,
        libc::SYS_open,
        libc::SYS_openat,
        libc::SYS_openat2,
        libc::SYS_pause,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_send_signal,
        libc::SYS_pipe,
        libc::SYS_pipe2,
        libc::SYS_pkey_alloc,
        libc::SYS_pkey_free,
        libc::SYS_pkey_mprotect,
        libc::SYS_poll,
        libc::SYS_ppoll,
        libc::SYS_prctl,
        libc::SYS_pread64,
        libc::SYS_preadv,
        libc::SYS_preadv2,
        libc::SYS_prlimit64,
        libc::SYS_pselect6,
        libc::SYS_pwrite64,
        libc::SYS_pwritev,
        libc::SYS_pwritev2,
        libc::SYS_read,
        libc::SYS_readahead,
        libc::SYS_readlink,
        libc::SYS_readlinkat,
        libc::SYS_readv,
        libc::SYS_recvfrom,
        libc::SYS_recvmmsg,
        libc::SYS_recvmsg,
        libc::SYS_remap_file_pages,
        libc::SYS_removexattr,
        libc::SYS_rename,
        libc::SYS_renameat,
        libc::SYS_renameat2,
        libc::SYS_restart_syscall,
        libc::SYS_rmdir,
        libc::SYS_rseq,
        libc::SYS_rt_sigaction,
        libc::SYS_rt_sigpending,
        libc::SYS_rt_sigprocmask,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_sigreturn,
        libc::SYS_rt_sigsuspend,
        libc::SYS_rt_sigtimedwait,
        libc::SYS_rt_tgsigqueueinfo,
        libc::SYS_sched_get_priority_max,
        libc::SYS_sched_get_priority_min,
        libc::SYS_sched_getaffinity,
        libc::SYS_sched_getattr,
        libc::SYS_sched_getparam,
        libc::SYS_sched_getscheduler,
        libc::SYS_sched_rr_get_interval,
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_yield,
        libc::SYS_seccomp,
        libc::SYS_select,
        libc::SYS_semctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_sendfile,
        libc::SYS_sendmmsg,
        libc::SYS_sendmsg,
        libc::SYS_sendto,
        libc::SYS_set_mempolicy,
        libc::SYS_set_robust_list,
        libc::SYS_set_tid_address,
        libc::SYS_setfsgid,
        libc::SYS_setfsuid,
        libc::SYS_setgid,
        libc::SYS_setgroups,
        libc::SYS_setitimer,
        libc::SYS_setpgid,
        libc::SYS_setpriority,
        libc::SYS_setregid,
        libc::SYS_setresgid,
        libc::SYS_setresuid,
        libc::SYS_setreuid,
        libc::SYS_setrlimit,
        libc::SYS_setsid,
        libc::SYS_setsockopt,
        libc::SYS_setuid,
        libc::SYS_setxattr,
        libc::SYS_shmat,
        libc::SYS_shmctl,
        libc::SYS_shmdt,
        libc::SYS_shmget,
        libc::SYS_shutdown,
        libc::SYS_sigaltstack,
        libc::SYS_signalfd,
        libc::SYS_signalfd4,
        libc::SYS_socketpair,
        libc::SYS_splice,
        libc::SYS_stat,
        libc::SYS_statfs,
        libc::SYS_statx,
        libc::SYS_symlink,
        libc::SYS_symlinkat,
        libc::SYS_sync,
        libc::SYS_sync_file_range,
        libc::SYS_syncfs,
        libc::SYS_sysinfo,
        libc::SYS_tee,
        libc::SYS_tgkill,
        libc::SYS_time,
        libc::SYS_timer_create,
        libc::SYS_timer_delete,
        libc::SYS_timer_getoverrun,
        libc::SYS_timer_gettime,
        libc::SYS_timer_settime,
        libc::SYS_timerfd_create,
        libc::SYS_timerfd_gettime,
        libc::SYS_timerfd_settime,
        libc::SYS_times,
        libc::SYS_tkill,
        libc::SYS_truncate,
        libc::SYS_umask,
        libc::SYS_uname,
        libc::SYS_unlink,
        libc::SYS_unlinkat,
        libc::SYS_utime,
        libc::SYS_utimensat,
        libc::SYS_utimes,
        libc::SYS_vfork,
        libc::SYS_vmsplice,
        libc::SYS_wait4,
        libc::SYS_waitid,
        libc::SYS_write,
        libc::SYS_writev,
        libc::SYS_clone3, // turned into ENOSYS by the second filter
    ];

    fn cond(arg: u8, len: Len, op: Op, value: u64) -> Result<Cond, AgentError> {
        Ok(Cond::new(arg, len, op, value)?)
    }

    fn rule(conditions: Vec<Cond>) -> Result<SeccompRule, AgentError> {
        Ok(SeccompRule::new(conditions)?)
    }

    pub fn programs() -> Result<Vec<BpfProgram>, AgentError> {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = ALLOW.iter().map(|s| (*s, vec![])).collect();
        // Sockets: Unix and IP only. No netlink or packet sockets, and no vsock, which no
        // network namespace covers and which reaches a VM's host.
        let families = [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6];
        let socket: Result<Vec<_>, AgentError> =
            families.iter().map(|af| rule(vec![cond(0, Len::Dword, Op::Eq, *af as u64)?])).collect();
        rules.insert(libc::SYS_socket, socket?);
        // clone(2) without any CLONE_NEW* flag: no nested namespaces.
        const NEW_NAMESPACES: u64 = (libc::CLONE_NEWNS
            | libc::CLONE_NEWCGROUP
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUSER
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWTIME) as u64;
        rules.insert(libc::SYS_clone, vec![rule(vec![cond(0, Len::Qword, Op::MaskedEq(NEW_NAMESPACES), 0)?])?]);
        // ioctl: all but pushing input into a terminal.
        rules.insert(
            libc::SYS_ioctl,
            vec![rule(vec![
                cond(1, Len::Dword, Op::Ne, libc::TIOCSTI)?,
                cond(1, Len::Dword, Op::Ne, libc::TIOCLINUX)?,
            ])?],
        );
        // personality: only the harmless values.
        let personas: Result<Vec<_>, AgentError> = [0u64, 0x0008, 0x20000, 0x20008, 0xffff_ffff]
            .iter()
            .map(|v| rule(vec![cond(0, Len::Dword, Op::Eq, *v)?]))
            .collect();
        rules.insert(libc::SYS_personality, personas?);
        let allow = SeccompFilter::new(
            rules,
            SeccompAction::Errno(libc::EPERM as u32),
            SeccompAction::Allow,
            TargetArch::x86_64,
        )?;
        let clone3 = SeccompFilter::new(
            [(libc::SYS_clone3, vec![])].into_iter().collect(),
            SeccompAction::Allow,
            SeccompAction::Errno(libc::ENOSYS as u32),
            TargetArch::x86_64,
        )?;
        Ok(vec![allow.try_into()?, clone3.try_into()?])
    }
}

use crate::error::AgentError;

/// What the agent's seccomp filters came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// Whether the agent's own filters are in force (false: no policy for the architecture,
    /// or a sandbox that refuses every further filter).
    pub own: bool,
    /// Filters already in force when the agent started: an OpenShell sandbox's supervisor
    /// installs its own deny-list first.
    pub inherited: u32,
}

/// Applies the filters to this thread (the agent does it before starting any other).
///
/// Inside an OpenShell sandbox a filter is already in force, and it refuses
/// `seccomp(SECCOMP_SET_MODE_FILTER)` so that no program can replace it. Filters only
/// ever add up (the strictest answer wins), so the agent's allow-list goes in through
/// `prctl(PR_SET_SECCOMP)`, the older door to the same thing; where that is refused too,
/// the sandbox's own filter stays the only one, and the agent says so.
pub fn apply() -> Result<Applied, AgentError> {
    let inherited = inherited_filters();
    #[cfg(target_arch = "x86_64")]
    {
        for (i, program) in x86_64::programs()?.iter().enumerate() {
            match seccompiler::apply_filter(program) {
                Ok(()) => {}
                Err(seccompiler::Error::Seccomp(e)) if e.raw_os_error() == Some(libc::EPERM) && inherited > 0 => {
                    match install_with_prctl(program) {
                        Ok(()) => {}
                        // None of the agent's went in: the sandbox's filter alone, said plainly.
                        Err(_) if i == 0 => return Ok(Applied { own: false, inherited }),
                        Err(e) => return Err(AgentError::System { call: "prctl(PR_SET_SECCOMP)", source: e }),
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Applied { own: true, inherited })
    }
    #[cfg(not(target_arch = "x86_64"))]
    Ok(Applied { own: false, inherited })
}

/// How many seccomp filters this process runs under, from `/proc/self/status`.
fn inherited_filters() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field =
        |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse::<u32>().ok());
    // `Seccomp_filters` is Linux 5.9+; `Seccomp: 2` (filter mode) says at least one.
    field("Seccomp_filters:").unwrap_or(u32::from(field("Seccomp:") == Some(2)))
}

#[cfg(target_arch = "x86_64")]
fn install_with_prctl(program: &seccompiler::BpfProgram) -> std::io::Result<()> {
    let len = u16::try_from(program.len()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // The same layout the kernel reads: seccompiler's instructions are `struct sock_filter`.
    let prog = libc::sock_fprog { len, filter: program.as_ptr() as *mut libc::sock_filter };
    // SAFETY: `prog` points at `program`, which outlives the call; the kernel copies it.
    let rc =
        unsafe { libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog as *const libc::sock_fprog, 0, 0) };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}
