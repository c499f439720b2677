//! Nothing a run starts outlives it. When the last running run ends, what runs left
//! behind is killed, including processes that left their run's process group with
//! `setsid` or a double fork; the Python kernel stays.
//!
//! Which processes count as left behind depends on where the agent is:
//! - In Lens's own sandbox (the driver passes `--own-pid-namespace`, and the agent's
//!   parent is pid 1) it is every process but the sandbox's init, the agent and the kernel.
//! - Elsewhere (a gateway's sandbox, where the gateway's own processes share the
//!   namespace) the agent makes itself a child subreaper, so whatever its runs started
//!   stays its descendant even when orphaned; it kills its descendants but the kernel,
//!   and reaps them. On a host the first way would kill everything its user may signal;
//!   the second never reaches beyond what the agent started.

use nix::{
    sys::{
        signal::{Signal, kill},
        wait::{WaitPidFlag, waitpid},
    },
    unistd::{Pid, getpid, getppid},
};

/// How this agent sweeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Everything in the sandbox's pid namespace but init, the agent and what is kept.
    Namespace,
    /// The agent's own descendants but what is kept.
    Descendants,
    /// Nowhere safe to sweep.
    Off,
}

impl Sweep {
    /// The way that is safe here; asked for a namespace of its own or not.
    pub fn choose(own_namespace: bool) -> Self {
        if own_namespace && getppid() == Pid::from_raw(1) {
            Sweep::Namespace
        } else if nix::sys::prctl::set_child_subreaper(true).is_ok() {
            Sweep::Descendants
        } else {
            Sweep::Off
        }
    }

    /// Kills what runs left behind, but `keep`, until none is left.
    pub fn sweep(self, keep: &[u32]) {
        if self == Sweep::Off {
            return;
        }
        let me = getpid().as_raw();
        for _ in 0..50 {
            let victims: Vec<i32> = match self {
                Sweep::Namespace => all_pids().into_iter().filter(|pid| *pid != 1 && *pid != me).collect(),
                _ => descendants(me),
            }
            .into_iter()
            .filter(|pid| !keep.contains(&(*pid as u32)))
            .collect();
            if victims.is_empty() {
                return;
            }
            for &pid in &victims {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
            if self == Sweep::Descendants {
                // Orphans are the agent's children now: reaped here, or they stay zombies.
                // Only victims are waited for, never a run's own child (its thread waits).
                for &pid in &victims {
                    let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
                }
            }
        }
    }
}

fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .collect()
}

/// A process's parent, from `/proc/<pid>/stat` (after the command name, which may hold
/// spaces and parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// Every process whose chain of parents reaches `root`.
fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = all_pids().into_iter().filter_map(|p| Some((p, parent_of(p)?))).collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parents.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        i += 1;
    }
    found.remove(0);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_are_found_through_grandchildren_and_nothing_else() {
        let mut child = std::process::Command::new("sh").args(["-c", "sleep 30 & wait"]).spawn().unwrap();
        let shell = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let below = loop {
            let below = descendants(shell);
            if !below.is_empty() || std::time::Instant::now() > deadline {
                break below;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let mine = descendants(getpid().as_raw());
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(below.len(), 1, "the shell's sleep alone: {below:?}");
        assert!(mine.contains(&shell) && mine.contains(&below[0]), "{mine:?}");
        assert!(!mine.contains(&1) && !mine.contains(&getpid().as_raw()));
    }
}
