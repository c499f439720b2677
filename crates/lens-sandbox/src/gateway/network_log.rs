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
    /// Refused: it failed on its way rather than by a rule.
    failed: bool,
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
        } else if decision.failed {
            decision.why.clone()
        } else {
            format!("refused by the gateway: {}", decision.why)
        };
        let target = format!("{}:{}", decision.host, decision.port);
        records.record_why(&target, decision.allowed, &reason, unlisted);
    }
    records.taken().into_iter().map(|r| NetReach { bytes_sent: None, bytes_received: None, ..r }).collect()
}

fn decision(line: &SandboxLogLine) -> Option<Decision> {
    if line.message.starts_with("NET:FAIL ") {
        return failure(&line.message);
    }
    if line.message.starts_with("NET:") {
        return shorthand(&line.message);
    }
    if line.message.starts_with("HTTP:") {
        return http_refusal(&line.message);
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
            failed: false,
        });
    }
    None
}

/// A network event's shorthand: its action, `-> host:port`, and the `[policy:…]` and
/// `[reason:…]` tags.
fn shorthand(message: &str) -> Option<Decision> {
    let allowed = action(message)?;
    let (_, after) = message.split_once(" -> ")?;
    let (host, port) = host_port(after.split_whitespace().next()?)?;
    let why = if allowed { tag(message, "policy").unwrap_or_default() } else { reason(message).unwrap_or_default() };
    Some(Decision { host, port, allowed, why, failed: false })
}

/// A connection the proxy let through that then failed (`NET:FAIL [LOW] host:port`,
/// a TLS or relay error upstream): not reached. The proxy's message is kept out of the
/// shorthand when a destination is named, so the reason is the proxy's word only.
fn failure(message: &str) -> Option<Decision> {
    let target = message.split_whitespace().nth(2).filter(|t| !t.starts_with('['))?;
    let (host, port) = host_port(target)?;
    let why = match tag(message, "msg") {
        Some(msg) => format!("the connection failed at the gateway's proxy ({msg})"),
        None => "the connection failed at the gateway's proxy".to_owned(),
    };
    Some(Decision { host, port, allowed: false, why, failed: true })
}

/// A request the proxy refused inside an allowed connection (its L7 rules: the
/// read-only registries' upload). Allowed requests are not records of their own: the
/// connection's `NET:OPEN` line is.
///
/// ```text
/// HTTP:POST [MED] DENIED pip(9) -> POST https://registry.example/legacy/ [policy:registries engine:l7] [reason:L7_REQUEST deny …]
/// ```
fn http_refusal(message: &str) -> Option<Decision> {
    if action(message)? {
        return None;
    }
    let after = message.split_once(" -> ").map_or_else(
        // Without a process the request follows the action: `DENIED POST https://…`.
        || message.split_once("] DENIED ").map(|(_, rest)| rest),
        |(_, rest)| Some(rest),
    )?;
    let mut words = after.split_whitespace();
    let method = words.next()?;
    let url = words.next()?;
    let (scheme, rest) = url.split_once("://")?;
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let (host, port) = match host_port(authority) {
        Some(hp) => hp,
        None => (authority.to_owned(), if scheme == "http" { 80 } else { 443 }),
    };
    let refusal = reason(message).unwrap_or_else(|| "refused by its rules".into());
    Some(Decision { host, port, allowed: false, why: format!("{method} /{path}: {refusal}"), failed: false })
}

/// `ALLOWED` or `DENIED`; `None` for events that decide nothing.
fn action(message: &str) -> Option<bool> {
    if message.contains("] ALLOWED ") {
        Some(true)
    } else if message.contains("] DENIED ") {
        Some(false)
    } else {
        None
    }
}

/// `host:port`, with a protocol after bypass events' targets (`host:443/tcp`).
fn host_port(target: &str) -> Option<(String, u16)> {
    let target = target.split_once('/').map_or(target, |(t, _)| t);
    let (host, port) = target.rsplit_once(':')?;
    Some((host.trim_matches(['[', ']']).to_owned(), port.parse().ok()?))
}

/// A `[name:…]` tag's value, to its first space or `]` (`msg` to the tag's end).
fn tag(message: &str, name: &str) -> Option<String> {
    let start = message.find(&format!("[{name}:"))? + name.len() + 2;
    let rest = &message[start..];
    let end = if name == "msg" { rest.rfind(']')? } else { rest.find([' ', ']'])? };
    Some(rest[..end].to_owned())
}

/// The refusal's reason: the last field of its bracket (`[reason:…]`, or after other
/// fields, `[attempt:2 reason:…]`), running to the bracket's end (it may hold brackets).
fn reason(message: &str) -> Option<String> {
    let start = message.find("[reason:").or_else(|| message.find(" reason:"))?;
    let rest = &message[start..];
    let rest = &rest[rest.find(':')? + 1..];
    Some(rest[..rest.rfind(']')?].to_owned())
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
        assert_eq!(records.len(), 3, "an allowed request is its connection's record: {records:?}");
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

    #[test]
    fn a_request_the_l7_rules_refused_is_a_refusal_with_its_reason() {
        let lines = [
            line("NET:OPEN [INFO] ALLOWED pip(9) -> registry.example:443 [policy:registries engine:opa]"),
            line(
                "HTTP:POST [MED] DENIED pip(9) -> POST https://registry.example/legacy/ [policy:registries engine:l7] \
                 [reason:L7_REQUEST deny POST /legacy/ [not in allowed methods]]",
            ),
            line(
                "HTTP:PUT [MED] DENIED PUT http://other.example:8080/x [policy:o engine:l7] [attempt:2 reason:read only]",
            ),
        ];
        let records = reached(&lines);
        assert_eq!(records.len(), 3, "{records:?}");
        assert!(records[0].allowed);
        let upload = &records[1];
        assert_eq!((upload.host.as_str(), upload.port, upload.allowed), ("registry.example", 443, false));
        assert_eq!(
            upload.reason,
            "refused by the gateway: POST /legacy/: L7_REQUEST deny POST /legacy/ [not in allowed methods]"
        );
        assert!(!upload.allowable, "a refused request is no host to allow: {upload:?}");
        assert_eq!((records[2].port, records[2].reason.as_str()), (8080, "refused by the gateway: PUT /x: read only"));
    }

    #[test]
    fn a_connection_that_failed_at_the_proxy_is_not_reached() {
        let lines = [
            line("NET:OPEN [INFO] ALLOWED curl(7) -> down.example:443 [policy:lens engine:opa]"),
            line("NET:FAIL [LOW] down.example:443"),
            line("NET:FAIL [LOW] [msg:Proxy connection error: reset]"),
        ];
        let records = reached(&lines);
        assert_eq!(records.len(), 2, "a failure without a host is no record: {records:?}");
        assert_eq!((records[1].host.as_str(), records[1].allowed), ("down.example", false));
        assert_eq!(records[1].reason, "the connection failed at the gateway's proxy");
        assert!(!records[1].allowable);
    }
}
