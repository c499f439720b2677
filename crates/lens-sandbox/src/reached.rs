//! What the run in progress reached on the network, host by host: each decision of the
//! egress proxy, and the bytes each way of the connections it let through. A run's step
//! shows it; the sandbox's code decides how many connections it makes, so connections to
//! the same host and port with the same outcome are one record, and a run keeps at most
//! [`MOST_HOSTS`] records.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicU64, Ordering},
};

use lens_types::NetReach;

use crate::shown::shown;

/// The most records one run keeps; later hosts are not recorded (the egress log still
/// has them).
pub const MOST_HOSTS: usize = 100;

/// Bytes one connection (or several to the same place) moved: sent, received.
#[derive(Debug, Default)]
pub(crate) struct Bytes {
    pub sent: AtomicU64,
    pub received: AtomicU64,
}

#[derive(Debug)]
struct Record {
    host: String,
    port: u16,
    allowed: bool,
    reason: String,
    connections: u32,
    bytes: Arc<Bytes>,
    /// Refused only for being on no list.
    unlisted: bool,
}

/// The run's records; shared by a sandbox's proxy connections.
#[derive(Debug, Default)]
pub(crate) struct Reached(Mutex<Vec<Record>>);

impl Reached {
    /// A new run: nothing reached yet.
    pub fn clear(&self) {
        if let Ok(mut records) = self.0.lock() {
            records.clear();
        }
    }

    /// A decision on `target` (`host:port`, as the program asked); the counters its
    /// connection adds its bytes to.
    pub fn record(&self, target: &str, allowed: bool, reason: &str) -> Arc<Bytes> {
        self.record_why(target, allowed, reason, false)
    }

    /// [`record`](Self::record), saying whether a refusal was only for being on no list.
    pub fn record_why(&self, target: &str, allowed: bool, reason: &str, unlisted: bool) -> Arc<Bytes> {
        let (host, port) = match target.rsplit_once(':') {
            Some((host, port)) => (host.trim_matches(['[', ']']), port.parse().unwrap_or(0)),
            None => (target, 0),
        };
        let host = shown(&host.to_ascii_lowercase());
        let Ok(mut records) = self.0.lock() else { return Arc::default() };
        if let Some(r) = records.iter_mut().find(|r| r.host == host && r.port == port && r.allowed == allowed) {
            r.connections = r.connections.saturating_add(1);
            return r.bytes.clone();
        }
        let bytes = Arc::<Bytes>::default();
        if records.len() < MOST_HOSTS {
            let reason = shown(reason);
            records.push(Record { host, port, allowed, reason, connections: 1, bytes: bytes.clone(), unlisted });
        }
        bytes
    }

    /// The run's records so far, in the order first seen.
    pub fn taken(&self) -> Vec<NetReach> {
        let Ok(records) = self.0.lock() else { return Vec::new() };
        records
            .iter()
            .map(|r| NetReach {
                host: r.host.clone(),
                port: r.port,
                allowed: r.allowed,
                reason: r.reason.clone(),
                connections: r.connections,
                bytes_sent: Some(r.bytes.sent.load(Ordering::Relaxed)),
                bytes_received: Some(r.bytes.received.load(Ordering::Relaxed)),
                allowable: r.unlisted,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_to_one_place_are_one_record_with_their_bytes() {
        let reached = Reached::default();
        let one = reached.record("Files.Example.org:443", true, "connected to 192.0.2.1:443");
        let two = reached.record("files.example.org:443", true, "connected to 192.0.2.2:443");
        one.sent.fetch_add(10, Ordering::Relaxed);
        two.received.fetch_add(5, Ordering::Relaxed);
        reached.record("[::1]:80", false, "`::1` is an address");
        reached.record("nonsense", false, "`nonsense` has no port");
        let taken = reached.taken();
        assert_eq!(taken.len(), 3);
        let first = &taken[0];
        assert_eq!((first.host.as_str(), first.port, first.connections), ("files.example.org", 443, 2));
        assert_eq!((first.bytes_sent, first.bytes_received), (Some(10), Some(5)));
        assert_eq!(first.reason, "connected to 192.0.2.1:443", "the first reason stays");
        assert_eq!((taken[1].host.as_str(), taken[1].port, taken[1].allowed), ("::1", 80, false));
        assert_eq!((taken[2].host.as_str(), taken[2].port), ("nonsense", 0));
        reached.clear();
        assert!(reached.taken().is_empty());
    }

    #[test]
    fn a_flood_of_hosts_keeps_a_bounded_record_with_text_cut() {
        let reached = Reached::default();
        for n in 0..10_000 {
            reached.record(&format!("h{n}.example:443"), false, "not listed");
        }
        let long = "x".repeat(5_000);
        reached.clear();
        reached.record(&format!("{long}:443"), false, &long);
        let taken = reached.taken();
        assert!(taken[0].host.len() < 300 && taken[0].reason.len() < 300, "{}", taken[0].host.len());
        for n in 0..10_000 {
            reached.record(&format!("h{n}.example:443"), false, "not listed");
        }
        assert_eq!(reached.taken().len(), MOST_HOSTS);
    }
}
