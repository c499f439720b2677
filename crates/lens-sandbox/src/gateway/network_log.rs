//! What a run reached on the network, read from the gateway's log of its sandbox: the
//! gateway's proxy decides each connection itself and its sandbox's supervisor logs the
//! decision as an OCSF network event, whose one-line form is the log line's message:
//!
//! ```text
//! NET:OPEN [INFO] ALLOWED python3(42) -> files.example.org:443 [policy:lens engine:opa]
//! NET:OPEN [MED] DENIED python3(42) -> other.example:443 [policy:- engine:opa] [reason:endpoint other.example:443 is not allowed by any policy]
//! ```
//!
//! (NVIDIA's OpenShell, `openshell-ocsf/src/format/shorthand.rs`.) Older gateways logged
//! the message `CONNECT` with the decision in fields (`action`, `dst_host`, `dst_port`,
//! `policy`, `reason`); both are read. The decisions are kept as this machine's proxy
//! keeps its own ([`Reached`]); the gateway counts no bytes, so none are given.

use lens_openshell::proto::openshell::v1::SandboxLogLine;
use lens_types::NetReach;

use crate::reached::Reached;

/// The deny reasons of a host on no list (the gateway's policy engine): a person may
/// allow such a host for their conversation.
const UNLISTED: &[&str] = &["is not allowed by any policy", "network connections not allowed by policy"];

/// One decision of the gateway's proxy.
#[derive(Debug, PartialEq, Eq)]
struct Decision {
    host: String,
    port: u16,
    allowed: bool,
    /// The rule that allowed it, or why it was refused.
    why: String,
}

/// The records of a run's log lines: one per host, port and outcome, in the order first
/// seen, as many as a run keeps.
pub(crate) fn reached(lines: &[SandboxLogLine]) -> Vec<NetReach> {
    let records = Reached::default();
    for decision in lines.iter().filter_map(decision) {
        let unlisted = !decision.allowed
            && UNLISTED.iter().any(|u| decision.why.contains(u))
            && decision.host.parse::<std::net::IpAddr>().is_err();
        let reason = if decision.allowed {
            format!("allowed by the gateway's policy ({})", decision.why)
        } else {
            format!("refused by the gateway: {}", decision.why)
        };
        let target = format!("{}:{}", decision.host, decision.port);
        records.record_why(&target, decision.allowed, &reason, unlisted);
    }
    records.taken().into_iter().map(|r| NetReach { bytes_sent: None, bytes_received: None, ..r }).collect()
}

fn decision(line: &SandboxLogLine) -> Option<Decision> {
    if line.message.starts_with("NET:") {
        return shorthand(&line.message);
    }
    if line.message == "CONNECT" {
        let field = |k: &str| line.fields.get(k).map(String::as_str).unwrap_or_default();
        let allowed = field("action").eq_ignore_ascii_case("allow");
        let why = if allowed { field("policy") } else { field("reason") };
        return Some(Decision {
            host: field("dst_host").to_owned(),
            port: field("dst_port").parse().ok()?,
            allowed,
            why: why.to_owned(),
        });
    }
    None
}

/// A network event's shorthand: its action, `-> host:port`, and the `[policy:…]` and
/// `[reason:…]` tags.
fn shorthand(message: &str) -> Option<Decision> {
    let allowed = if message.contains("] ALLOWED ") {
        true
    } else if message.contains("] DENIED ") {
        false
    } else {
        return None;
    };
    let (_, after) = message.split_once(" -> ")?;
    let target = after.split_whitespace().next()?;
    // A protocol follows bypass events (`host:443/tcp`).
    let target = target.split_once('/').map_or(target, |(t, _)| t);
    let (host, port) = target.rsplit_once(':')?;
    let tag = |name: &str| {
        let start = message.find(&format!("[{name}:"))? + name.len() + 2;
        let rest = &message[start..];
        // A reason runs to its tag's end: the last `]` (it may hold brackets itself).
        let end = if name == "reason" { rest.rfind(']')? } else { rest.find([' ', ']'])? };
        Some(rest[..end].to_owned())
    };
    let why = if allowed { tag("policy").unwrap_or_default() } else { tag("reason").unwrap_or_default() };
    Some(Decision { host: host.to_owned(), port: port.parse().ok()?, allowed, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(message: &str) -> SandboxLogLine {
        SandboxLogLine { level: "OCSF".into(), source: "sandbox".into(), message: message.into(), ..Default::default() }
    }

    #[test]
    fn the_proxys_decisions_become_one_record_per_host_port_and_outcome() {
        let lines = [
            line("NET:OPEN [INFO] ALLOWED /usr/bin/python3(42) -> Files.Example.org:443 [policy:lens engine:opa]"),
            line("NET:OPEN [INFO] ALLOWED /usr/bin/python3(42) -> files.example.org:443 [policy:lens engine:opa]"),
            line(
                "NET:OPEN [MED] DENIED -(-) -> other.example:443 [policy:- engine:opa] [reason:endpoint \
                 other.example:443 is not allowed by any policy]",
            ),
            line(
                "NET:OPEN [MED] DENIED -(-) -> 10.0.0.7:443 [policy:- engine:opa] [reason:network connections not allowed by policy]",
            ),
            line("HTTP:GET [INFO] ALLOWED curl(7) -> GET https://files.example.org/x [policy:lens engine:l7]"),
            line("some other line"),
        ];
        let records = reached(&lines);
        assert_eq!(records.len(), 3, "{records:?}");
        let files = &records[0];
        assert_eq!(
            (files.host.as_str(), files.port, files.allowed, files.connections),
            ("files.example.org", 443, true, 2)
        );
        assert_eq!(files.reason, "allowed by the gateway's policy (lens)");
        assert_eq!((files.bytes_sent, files.bytes_received), (None, None), "the gateway counts no bytes");
        let other = &records[1];
        assert!(!other.allowed && other.allowable, "{other:?}");
        assert_eq!(other.reason, "refused by the gateway: endpoint other.example:443 is not allowed by any policy");
        assert!(!records[2].allowable, "an address is never offered: {:?}", records[2]);
    }

    #[test]
    fn the_older_connect_lines_with_fields_are_read_too() {
        let mut old = line("CONNECT");
        old.fields = [("action", "deny"), ("dst_host", "x.example"), ("dst_port", "80"), ("reason", "no rule [x]")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let records = reached(&[old]);
        assert_eq!((records[0].host.as_str(), records[0].port, records[0].allowed), ("x.example", 80, false));
        assert_eq!(records[0].reason, "refused by the gateway: no rule [x]");
    }

    #[test]
    fn a_run_keeps_at_most_a_hundred_records_and_bad_lines_are_skipped() {
        let lines: Vec<_> = (0..150)
            .map(|i| line(&format!("NET:OPEN [MED] DENIED -(-) -> h{i}.example:443 [policy:- engine:opa] [reason:r]")))
            .chain([line("NET:OPEN [INFO] ALLOWED -(-) -> nohost [policy:lens engine:opa]")])
            .chain([line("NET:OPEN [INFO] ALLOWED -(-) -> h.example:99999 [policy:lens engine:opa]")])
            .collect();
        assert_eq!(reached(&lines).len(), crate::reached::MOST_HOSTS);
    }
}
