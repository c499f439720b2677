//! The code sandbox's settings, declared once.
//!
//! Each [`SandboxNumber`] has one [`NumberSpec`]: its name (the API field, the stored
//! setting's key and the command-line option), its environment variable, default, range,
//! unit and label. The server's validation and its options, the OpenAPI document's ranges
//! and the web app's form are all made from these. The settings that are not numbers are
//! named by [`SandboxField`]. No other file names a sandbox setting as a string; adding
//! a number is one arm here, one line in `number_fields!` and one field in the view
//! and the request.

use crate::{SandboxSettingsView, UpdateSandboxSettingsRequest};

/// One of the sandbox's settings that are not numbers (the server checks each its own way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxField {
    Enabled,
    Backend,
    GatewayAddress,
    GatewayCertDir,
    GatewayServerName,
    Network,
    Hosts,
    TrustedEgress,
    PeopleAllowHosts,
}

impl SandboxField {
    /// The API field, and the stored key's tail (`sandbox.<name>`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Enabled => "enabled",
            Self::Backend => "backend",
            Self::GatewayAddress => "gateway_address",
            Self::GatewayCertDir => "gateway_cert_dir",
            Self::GatewayServerName => "gateway_server_name",
            Self::Network => "network",
            Self::Hosts => "hosts",
            Self::TrustedEgress => "trusted_egress",
            Self::PeopleAllowHosts => "people_allow_hosts",
        }
    }
}

/// One of the sandbox's numeric settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SandboxNumber {
    TimeoutSecs,
    Shown,
    MemoryMb,
    Processes,
    CpuMillis,
    DiskMb,
    IdleStopSecs,
    UnusedDeleteDays,
    MaxRunning,
    MaxRunningPerPerson,
    MaxMemoryMb,
    QueueWaitSecs,
    PoolSize,
}

/// What a numeric setting is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberSpec {
    /// The API field, the stored key's tail (`sandbox.<name>`) and the option's words.
    pub name: &'static str,
    /// The environment variable that sets it (and locks it in the admin's page).
    pub env: &'static str,
    pub default: u64,
    pub min: u64,
    pub max: u64,
    /// The form's label.
    pub label: &'static str,
    /// The unit after the form's field.
    pub unit: &'static str,
    /// Whether 0 stands for a figure worked out from the host ("automatic").
    pub zero_is_automatic: bool,
}

impl SandboxNumber {
    /// Every number, in the order the admin's form shows them.
    pub const ALL: [Self; 13] = [
        Self::TimeoutSecs,
        Self::Shown,
        Self::MemoryMb,
        Self::Processes,
        Self::CpuMillis,
        Self::DiskMb,
        Self::IdleStopSecs,
        Self::UnusedDeleteDays,
        Self::MaxRunning,
        Self::MaxRunningPerPerson,
        Self::MaxMemoryMb,
        Self::QueueWaitSecs,
        Self::PoolSize,
    ];

    pub const fn spec(self) -> NumberSpec {
        const fn n(
            name: &'static str,
            env: &'static str,
            (default, min, max): (u64, u64, u64),
            label: &'static str,
            unit: &'static str,
        ) -> NumberSpec {
            NumberSpec { name, env, default, min, max, label, unit, zero_is_automatic: false }
        }
        const fn automatic(spec: NumberSpec) -> NumberSpec {
            NumberSpec { zero_is_automatic: true, ..spec }
        }
        match self {
            Self::TimeoutSecs => {
                n("timeout_secs", "LENS_SANDBOX_TIMEOUT_SECS", (60, 1, 3600), "Time limit per run", "seconds")
            }
            Self::Shown => n(
                "shown",
                "LENS_SANDBOX_SHOWN",
                (4000, 100, 100_000),
                "Output shown per run",
                "characters of stdout and of stderr",
            ),
            Self::MemoryMb => n("memory_mb", "LENS_SANDBOX_MEMORY_MB", (1024, 64, 65_536), "Memory", "MiB per sandbox"),
            Self::Processes => n("processes", "LENS_SANDBOX_PROCESSES", (256, 16, 4096), "Processes", "per sandbox"),
            Self::CpuMillis => {
                n("cpu_millis", "LENS_SANDBOX_CPU_MILLIS", (1000, 100, 64_000), "CPU", "thousandths of a core")
            }
            Self::DiskMb => {
                n("disk_mb", "LENS_SANDBOX_DISK_MB", (1024, 16, 1_048_576), "Disk quota", "MiB per workspace")
            }
            Self::IdleStopSecs => n(
                "idle_stop_secs",
                "LENS_SANDBOX_IDLE_STOP_SECS",
                (600, 10, 604_800),
                "Stop when idle for",
                "seconds (files are kept)",
            ),
            Self::UnusedDeleteDays => n(
                "unused_delete_days",
                "LENS_SANDBOX_UNUSED_DELETE_DAYS",
                (14, 1, 3650),
                "Delete when unused for",
                "days",
            ),
            Self::MaxRunning => {
                automatic(n("max_running", "LENS_SANDBOX_MAX_RUNNING", (0, 0, 10_000), "Sandboxes at once", "at most"))
            }
            Self::MaxRunningPerPerson => automatic(n(
                "max_running_per_person",
                "LENS_SANDBOX_MAX_RUNNING_PER_PERSON",
                (0, 0, 10_000),
                "Sandboxes at once per person",
                "at most",
            )),
            Self::MaxMemoryMb => automatic(n(
                "max_memory_mb",
                "LENS_SANDBOX_MAX_MEMORY_MB",
                (0, 0, 16_777_216),
                "Memory of all sandboxes",
                "MiB together",
            )),
            Self::QueueWaitSecs => n(
                "queue_wait_secs",
                "LENS_SANDBOX_QUEUE_WAIT_SECS",
                (120, 1, 3600),
                "Wait for a free sandbox",
                "seconds, then the run is refused",
            ),
            Self::PoolSize => n(
                "pool_size",
                "LENS_SANDBOX_POOL_SIZE",
                (1, 0, 64),
                "Kept ready",
                "sandboxes started ahead for new conversations",
            ),
        }
    }

    /// The number named `name` (an API field), if any.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|n| n.spec().name == name)
    }

    /// Whether `value` is in range.
    pub fn check(self, value: u64) -> Result<u64, OutOfRange> {
        let spec = self.spec();
        if (spec.min..=spec.max).contains(&value) { Ok(value) } else { Err(OutOfRange(spec)) }
    }
}

/// A value outside its number's range; its sentence is for the admin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange(pub NumberSpec);

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let NumberSpec { name, min, max, .. } = self.0;
        write!(f, "`{name}` must be between {min} and {max}")
    }
}

impl std::error::Error for OutOfRange {}

/// Each number's field in the view and in the change request, listed once.
macro_rules! number_fields {
    ($($number:ident => $field:ident),* $(,)?) => {
        impl SandboxSettingsView {
            /// The value of `number` in force.
            pub fn number(&self, number: SandboxNumber) -> u64 {
                match number {
                    $(SandboxNumber::$number => self.$field,)*
                }
            }
        }

        impl UpdateSandboxSettingsRequest {
            fn number_slot(&mut self, number: SandboxNumber) -> &mut Option<u64> {
                match number {
                    $(SandboxNumber::$number => &mut self.$field,)*
                }
            }

            /// The change asked for `number`, if any.
            pub fn number(&self, number: SandboxNumber) -> Option<u64> {
                match number {
                    $(SandboxNumber::$number => self.$field,)*
                }
            }
        }
    };
}

number_fields! {
    TimeoutSecs => timeout_secs,
    Shown => shown,
    MemoryMb => memory_mb,
    Processes => processes,
    CpuMillis => cpu_millis,
    DiskMb => disk_mb,
    IdleStopSecs => idle_stop_secs,
    UnusedDeleteDays => unused_delete_days,
    MaxRunning => max_running,
    MaxRunningPerPerson => max_running_per_person,
    MaxMemoryMb => max_memory_mb,
    QueueWaitSecs => queue_wait_secs,
    PoolSize => pool_size,
}

impl SandboxSettingsView {
    /// What 0 stands for on this machine, for the numbers whose 0 is automatic.
    pub fn automatic(&self, number: SandboxNumber) -> Option<u64> {
        match number {
            SandboxNumber::MaxRunning => Some(self.auto_max_running),
            SandboxNumber::MaxRunningPerPerson => Some(self.auto_max_running_per_person),
            SandboxNumber::MaxMemoryMb => Some(self.auto_max_memory_mb),
            _ => None,
        }
    }

    /// Whether the setting named `name` is set by the server's environment.
    pub fn is_locked(&self, name: &str) -> bool {
        self.locked.iter().any(|l| l == name)
    }
}

impl UpdateSandboxSettingsRequest {
    /// Asks to set `number` to `value`.
    pub fn set_number(&mut self, number: SandboxNumber, value: u64) {
        *self.number_slot(number) = Some(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_number_is_declared_once_and_its_default_is_in_range() {
        let mut names: Vec<&str> = SandboxNumber::ALL.iter().map(|n| n.spec().name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SandboxNumber::ALL.len(), "no two numbers share a name");
        for n in SandboxNumber::ALL {
            let spec = n.spec();
            assert_eq!(n.check(spec.default), Ok(spec.default), "{}", spec.name);
            assert_eq!(spec.env, format!("LENS_SANDBOX_{}", spec.name.to_ascii_uppercase()));
            assert_eq!(SandboxNumber::named(spec.name), Some(n));
            assert!(spec.zero_is_automatic == (spec.default == 0), "{}: 0 is the automatic default", spec.name);
        }
    }

    #[test]
    fn a_request_sets_and_reads_each_number_by_its_own_field() {
        let mut req = UpdateSandboxSettingsRequest::default();
        for (i, n) in SandboxNumber::ALL.into_iter().enumerate() {
            req.set_number(n, i as u64 + 1);
        }
        let json = serde_json::to_value(&req).unwrap();
        for (i, n) in SandboxNumber::ALL.into_iter().enumerate() {
            assert_eq!(json[n.spec().name], i as u64 + 1, "the field is named as the declaration says");
            assert_eq!(req.number(n), Some(i as u64 + 1));
        }
        assert_eq!(
            SandboxNumber::MemoryMb.check(1).unwrap_err().to_string(),
            "`memory_mb` must be between 64 and 65536"
        );
    }
}
