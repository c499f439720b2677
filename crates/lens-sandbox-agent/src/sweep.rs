//! Nothing a run starts outlives it. When the last running run ends, every process in
//! the sandbox is killed except the sandbox's init, the agent and the Python kernel,
//! including processes that left their run's process group with `setsid` or a double fork.
//!
//! Only ever done in the sandbox's own pid namespace (the driver passes
//! `--own-pid-namespace`, and the agent's parent must be pid 1): on a host, the same
//! loop would kill everything its user may signal.

use nix::{
    sys::signal::{Signal, kill},
    unistd::{Pid, getpid, getppid},
};

/// Whether sweeping is safe here.
pub fn allowed(asked: bool) -> bool {
    asked && getppid() == Pid::from_raw(1)
}

/// Kills every process but pid 1, the agent and `keep`, until none is left.
pub fn sweep(keep: &[u32]) {
    let me = getpid().as_raw();
    for _ in 0..50 {
        let victims: Vec<i32> = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
            .filter(|pid| *pid != 1 && *pid != me && !keep.contains(&(*pid as u32)))
            .collect();
        if victims.is_empty() {
            return;
        }
        for pid in victims {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}
