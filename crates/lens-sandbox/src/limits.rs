//! A sandbox's limits; each is a setting with a default that suits one person's analysis.

use serde::{Deserialize, Serialize};

/// What one sandbox may use at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Memory of all its processes together; beyond it the kernel kills one ("out of memory").
    pub memory_bytes: u64,
    /// Processes and threads together (a fork bomb stops here).
    pub processes: u64,
    /// CPU time in thousandths of a core (1000 = one core).
    pub cpu_millis: u64,
    /// Disk space of the workspace.
    pub disk_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self { memory_bytes: 1 << 30, processes: 256, cpu_millis: 1000, disk_bytes: 1 << 30 }
    }
}

impl Limits {
    /// Threads numeric libraries should use: the CPU quota, rounded up.
    pub fn threads(&self) -> u64 {
        self.cpu_millis.div_ceil(1000).max(1)
    }

    /// The environment of every command in a sandbox whose workspace is at `workspace`,
    /// with thread counts matching its CPU quota.
    pub fn sandbox_env(&self, workspace: &str) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("USER", "sandbox"),
            ("LANG", "C.UTF-8"),
            ("TMPDIR", "/tmp"),
            ("MPLBACKEND", "Agg"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        env.push(("HOME".into(), workspace.to_owned()));
        env.push(("MPLCONFIGDIR".into(), format!("{workspace}/.cache/matplotlib")));
        for var in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"] {
            env.push((var.to_string(), self.threads().to_string()));
        }
        env
    }
}
