//! Out-of-memory kills as the sandbox's own cgroup counts them, where the sandbox can see
//! its cgroup (a container's `/sys/fs/cgroup`, as on a gateway): a run that failed while
//! the count grew ran out of memory. Under Lens's own bubblewrap nothing is mounted
//! there, the count stays 0, and the server counts from the host instead.

use lens_types::RunEnding;

/// The counters, v2 first: (file, key of the `key value` line).
const COUNTERS: [(&str, &str); 2] =
    [("/sys/fs/cgroup/memory.events", "oom_kill"), ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill")];

/// Out-of-memory kills in this sandbox's cgroup so far (0 where it cannot be seen).
pub fn kills() -> u64 {
    COUNTERS.iter().find_map(|(file, key)| read_key(&std::fs::read_to_string(file).ok()?, key)).unwrap_or(0)
}

fn read_key(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| line.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

/// `ending` as the person should read it: a failure while the kernel killed for memory
/// (`before` is the count when the run began) is "out of memory".
pub fn judge(before: u64, ending: RunEnding) -> RunEnding {
    let failed = !matches!(ending, RunEnding::Exited { code: 0 } | RunEnding::CutShort);
    if failed && kills() > before { RunEnding::OutOfMemory } else { ending }
}

#[cfg(test)]
mod tests {
    use super::read_key;

    #[test]
    fn both_cgroup_versions_name_the_count_oom_kill() {
        let v2 = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n";
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        assert_eq!((read_key(v2, "oom_kill"), read_key(v1, "oom_kill")), (Some(2), Some(3)));
        assert_eq!(read_key("oom_kill_disable 0\n", "oom_kill"), None);
    }
}
