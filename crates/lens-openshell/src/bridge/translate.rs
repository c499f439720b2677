//! The known wire differences between OpenShell 0.1.x (what Lens speaks) and the 0.0.x
//! source the tests build the real gateway from, one function per message. Each takes
//! and gives a message's bytes; fields not named here go through untouched.
//!
//! Requests, 0.1.x to 0.0.x: the `workspace_scope` selector becomes the plain
//! `workspace` string; `request_id`, `allow_missing` and `no_login_shell` do not exist
//! there; a list's page token is an offset; a network endpoint's TLS, enforcement and
//! access are strings; an exec's timeout is whole seconds; a log read's `since_time` is
//! milliseconds. Answers, 0.0.x to 0.1.x: the reverse of those, a creation time in
//! milliseconds becoming a timestamp, a delete's `deleted` becoming its outcome.

use super::{
    error::WireError,
    wire::{Message, Value},
};

type Result<T> = std::result::Result<T, WireError>;

/// Field numbers, named as in the two `.proto`s.
mod field {
    pub const SELECTOR_WORKSPACE: u32 = 1;
    pub const SPEC_POLICY: u32 = 7;
    pub const POLICY_NETWORK: u32 = 5;
    pub const MAP_VALUE: u32 = 2;
    pub const RULE_ENDPOINTS: u32 = 2;
    pub const ENDPOINT_TLS: u32 = 4;
    pub const ENDPOINT_ENFORCEMENT: u32 = 5;
    pub const ENDPOINT_ACCESS: u32 = 6;
}

/// An endpoint's three modes: the 0.1.x enum's values, in order, as 0.0.x spells them.
const TLS: &[&str] = &["", "skip", "terminate", "passthrough"];
const ENFORCEMENT: &[&str] = &["", "enforce", "audit"];
const ACCESS: &[&str] = &["", "read-only", "read-write", "full"];

fn modes() -> [(u32, &'static [&'static str]); 3] {
    [(field::ENDPOINT_TLS, TLS), (field::ENDPOINT_ENFORCEMENT, ENFORCEMENT), (field::ENDPOINT_ACCESS, ACCESS)]
}

/// A selector in field `from` as the workspace's name in field `to`.
fn selector_to_workspace(m: &mut Message, from: u32, to: u32) -> Result<()> {
    let mut workspace = String::new();
    for value in m.take(from) {
        if let Value::Bytes(bytes) = value {
            workspace = Message::decode(&bytes)?.string(field::SELECTOR_WORKSPACE);
        }
    }
    m.push_string(to, &workspace);
    Ok(())
}

fn drop_fields(m: &mut Message, numbers: &[u32]) {
    for n in numbers {
        m.take(*n);
    }
}

/// Each endpoint of a policy's network rules, changed by `change`.
fn each_endpoint(policy: &mut Message, change: &dyn Fn(&mut Message) -> Result<()>) -> Result<()> {
    policy.each(field::POLICY_NETWORK, |entry| {
        entry.each(field::MAP_VALUE, |rule| rule.each(field::RULE_ENDPOINTS, |endpoint| change(endpoint)))
    })
}

fn policy_to_old(policy: &mut Message) -> Result<()> {
    each_endpoint(policy, &|endpoint| {
        for (number, names) in modes() {
            for value in endpoint.take(number) {
                let Value::Varint(v) = value else { return Err(WireError::NotAnEnum(number)) };
                let name = names.get(v as usize).ok_or(WireError::NoSuchValue { field: number, value: v })?;
                endpoint.push_string(number, name);
            }
        }
        Ok(())
    })
}

fn policy_to_new(policy: &mut Message) -> Result<()> {
    each_endpoint(policy, &|endpoint| {
        for (number, names) in modes() {
            for value in endpoint.take(number) {
                let Value::Bytes(text) = value else { return Err(WireError::NotAString(number)) };
                let text = String::from_utf8_lossy(&text).to_ascii_lowercase();
                let v = names.iter().position(|n| *n == text).unwrap_or(0);
                if v != 0 {
                    endpoint.push(number, Value::Varint(v as u64));
                }
            }
        }
        Ok(())
    })
}

fn decode(bytes: &[u8]) -> Result<Message> {
    Message::decode(bytes)
}

/// `GetSandbox`, `StopSandbox`, `StartSandbox`: name 1, selector 2 (then a request id 3).
pub fn by_name(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    selector_to_workspace(&mut m, 2, 2)?;
    drop_fields(&mut m, &[3]);
    Ok(m.encode())
}

/// `DeleteSandbox`, and whether a missing sandbox is fine (0.0.x answers NOT_FOUND).
pub fn delete(bytes: &[u8]) -> Result<(Vec<u8>, bool)> {
    let mut m = decode(bytes)?;
    let allow_missing = m.varint(3).unwrap_or(0) != 0;
    selector_to_workspace(&mut m, 2, 2)?;
    drop_fields(&mut m, &[3, 4]);
    Ok((m.encode(), allow_missing))
}

/// 0.0.x's `deleted` as 0.1.x's outcome.
pub fn deleted(bytes: &[u8]) -> Result<Vec<u8>> {
    let m = decode(bytes)?;
    let outcome = if m.varint(1).unwrap_or(0) != 0 { 1 } else { 3 };
    Ok(Message(vec![(2, Value::Varint(outcome))]).encode())
}

/// The outcome of a delete of a sandbox that was not there.
pub fn already_absent() -> Vec<u8> {
    Message(vec![(2, Value::Varint(3))]).encode()
}

/// `CreateSandbox`: selector 7 becomes workspace 5, no request id 8, the policy's modes
/// as strings.
pub fn create(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    selector_to_workspace(&mut m, 7, 5)?;
    drop_fields(&mut m, &[8]);
    m.each(1, |spec| spec.each(field::SPEC_POLICY, policy_to_old))?;
    Ok(m.encode())
}

/// `ListSandboxes`: page size 1 is the limit, the page token 2 an offset. Gives the
/// offset and limit, for the answer's next token.
pub fn list(bytes: &[u8]) -> Result<(Vec<u8>, u64, u64)> {
    let mut m = decode(bytes)?;
    let limit = m.varint(1).unwrap_or(0);
    let token = m.string(2);
    let offset = if token.is_empty() { 0 } else { token.parse().map_err(|_| WireError::PageToken(token.clone()))? };
    m.take(2);
    if offset > 0 {
        m.push(2, Value::Varint(offset));
    }
    selector_to_workspace(&mut m, 4, 4)?;
    Ok((m.encode(), offset, limit))
}

/// A list's answer: each sandbox, and a next page token when the page was full.
pub fn listed(bytes: &[u8], offset: u64, limit: u64) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    m.each(1, sandbox_to_new)?;
    let count = m.0.iter().filter(|(n, _)| *n == 1).count() as u64;
    if limit > 0 && count >= limit {
        m.push_string(2, &(offset + count).to_string());
    }
    Ok(m.encode())
}

/// An answer carrying one sandbox in field 1 (`SandboxResponse`).
pub fn sandbox_response(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    m.each(1, sandbox_to_new)?;
    Ok(m.encode())
}

fn sandbox_to_new(sandbox: &mut Message) -> Result<()> {
    sandbox.each(1, |meta| {
        if let Some(ms) = meta.varint(3) {
            meta.take(3);
            meta.push(103, Value::Bytes(timestamp(ms as i64)));
        }
        Ok(())
    })?;
    sandbox.each(2, |spec| spec.each(field::SPEC_POLICY, policy_to_new))
}

/// A `google.protobuf.Timestamp` for milliseconds since the epoch.
fn timestamp(ms: i64) -> Vec<u8> {
    let mut t = Message::default();
    t.push(1, Value::Varint(ms.div_euclid(1000) as u64));
    let nanos = ms.rem_euclid(1000) * 1_000_000;
    if nanos != 0 {
        t.push(2, Value::Varint(nanos as u64));
    }
    t.encode()
}

/// Milliseconds since the epoch of a `google.protobuf.Timestamp`.
fn millis(bytes: &[u8]) -> Result<i64> {
    let t = decode(bytes)?;
    let seconds = t.varint(1).unwrap_or(0) as i64;
    let nanos = t.varint(2).unwrap_or(0) as i64;
    Ok(seconds * 1000 + nanos / 1_000_000)
}

/// The sandbox an exec or a log read names (0.1.x: its name; 0.0.x wants its id).
pub fn named_sandbox(bytes: &[u8]) -> Result<String> {
    Ok(decode(bytes)?.string(1))
}

/// A request to look a sandbox up by name, in 0.0.x's form.
pub fn get_by_name(name: &str) -> Vec<u8> {
    let mut m = Message::default();
    m.push_string(1, name);
    m.encode()
}

/// The id in a `SandboxResponse`.
pub fn sandbox_id(bytes: &[u8]) -> Result<String> {
    let m = decode(bytes)?;
    let sandbox = decode(m.bytes(1).unwrap_or_default())?;
    Ok(decode(sandbox.bytes(1).unwrap_or_default())?.string(1))
}

/// `ExecSandboxRequest`: the sandbox's id in 1; no login-shell switch 10, request id 11 or
/// selector 12; the timeout 105 as whole seconds 5.
pub fn exec(bytes: &[u8], id: &str) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    m.take(1);
    m.push_string(1, id);
    drop_fields(&mut m, &[10, 11, 12]);
    for value in m.take(105) {
        if let Value::Bytes(duration) = value {
            let seconds = decode(&duration)?.varint(1).unwrap_or(0);
            if seconds > 0 {
                m.push(5, Value::Varint(seconds));
            }
        }
    }
    Ok(m.encode())
}

/// An interactive exec's first frame (`ExecSandboxInput.start`, field 1).
pub fn exec_start(bytes: &[u8], id: &str) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    let mut out = Err(WireError::NoStart);
    for value in m.take(1) {
        if let Value::Bytes(start) = value {
            out = exec(&start, id);
        }
    }
    m.push(1, Value::Bytes(out?));
    Ok(m.encode())
}

/// The sandbox an interactive exec's first frame names.
pub fn exec_start_sandbox(bytes: &[u8]) -> Result<String> {
    named_sandbox(decode(bytes)?.bytes(1).ok_or(WireError::NoStart)?)
}

/// `UpdateConfig`: the policy's modes as strings, selector 10 as workspace 10, no request id 11.
pub fn update_config(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    m.each(2, policy_to_old)?;
    selector_to_workspace(&mut m, 10, 10)?;
    drop_fields(&mut m, &[11]);
    Ok(m.encode())
}

/// `GetSandboxLogs`: the sandbox's id in 1, `since_time` 103 as milliseconds 3, selector 6 as
/// workspace 6.
pub fn get_logs(bytes: &[u8], id: &str) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    m.take(1);
    m.push_string(1, id);
    for value in m.take(103) {
        if let Value::Bytes(t) = value {
            m.push(3, Value::Varint(millis(&t)? as u64));
        }
    }
    selector_to_workspace(&mut m, 6, 6)?;
    Ok(m.encode())
}

/// A log read's answer: each line's milliseconds 2 as its `event_time` 102.
pub fn logs(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut m = decode(bytes)?;
    m.each(1, |line| {
        if let Some(ms) = line.varint(2) {
            line.take(2);
            line.push(102, Value::Bytes(timestamp(ms as i64)));
        }
        Ok(())
    })?;
    Ok(m.encode())
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;
    use crate::proto::openshell::{
        sandbox::v1::{NetworkAccessPreset, NetworkEndpoint, NetworkPolicyRule, NetworkTlsMode, SandboxPolicy},
        v1::{
            CreateSandboxRequest, DeleteSandboxResponse, ExecSandboxRequest, GetSandboxLogsRequest,
            GetSandboxLogsResponse, SandboxSpec,
        },
    };

    fn read_only_policy() -> SandboxPolicy {
        let mut endpoint = NetworkEndpoint { host: "index.example.org".into(), ports: vec![443], ..Default::default() };
        endpoint.set_tls(NetworkTlsMode::Terminate);
        endpoint.set_access(NetworkAccessPreset::ReadOnly);
        let rule = NetworkPolicyRule { name: "lens".into(), endpoints: vec![endpoint], binaries: vec![] };
        SandboxPolicy { network_policies: [("lens".to_string(), rule)].into_iter().collect(), ..Default::default() }
    }

    #[test]
    fn a_create_names_its_workspace_and_spells_its_modes_and_back() {
        let r = CreateSandboxRequest {
            name: "lens-chat-1".into(),
            spec: Some(SandboxSpec { policy: Some(read_only_policy()), ..Default::default() }),
            workspace_scope: crate::workspace_scope(),
            request_id: "r".into(),
            ..Default::default()
        };
        let old = decode(&create(&r.encode_to_vec()).unwrap()).unwrap();
        assert_eq!(old.string(5), "default");
        assert!(old.get(7).is_none() && old.get(8).is_none());
        let text = String::from_utf8_lossy(&old.encode()).into_owned();
        assert!(text.contains("terminate") && text.contains("read-only"), "{text:?}");
        // The gateway's answer spells them; Lens reads its enums back.
        let sandbox = Message(vec![(2, Value::Bytes(old.bytes(1).unwrap().to_vec()))]).encode();
        let answer = sandbox_response(&Message(vec![(1, Value::Bytes(sandbox))]).encode()).unwrap();
        let read = crate::proto::openshell::v1::SandboxResponse::decode(&*answer).unwrap();
        let endpoint = &read.sandbox.unwrap().spec.unwrap().policy.unwrap().network_policies["lens"].endpoints[0];
        assert_eq!((endpoint.tls(), endpoint.access()), (NetworkTlsMode::Terminate, NetworkAccessPreset::ReadOnly));
    }

    #[test]
    fn an_exec_names_the_sandboxs_id_and_its_timeout_in_seconds() {
        let r = ExecSandboxRequest {
            sandbox: "lens-chat-1".into(),
            command: vec!["true".into()],
            no_login_shell: true,
            request_id: "r".into(),
            workspace_scope: crate::workspace_scope(),
            execution_timeout: Some(prost_types::Duration { seconds: 30, nanos: 0 }),
            ..Default::default()
        };
        let old = decode(&exec(&r.encode_to_vec(), "id-1").unwrap()).unwrap();
        assert_eq!((old.string(1), old.varint(5)), ("id-1".to_string(), Some(30)));
        assert!([10, 11, 12, 105].iter().all(|n| old.get(*n).is_none()));
    }

    #[test]
    fn a_log_read_in_milliseconds_and_back() {
        let since = prost_types::Timestamp { seconds: 1_700_000_000, nanos: 250_000_000 };
        let r = GetSandboxLogsRequest { sandbox: "n".into(), since_time: Some(since), ..Default::default() };
        let old = decode(&get_logs(&r.encode_to_vec(), "id").unwrap()).unwrap();
        assert_eq!(old.varint(3), Some(1_700_000_000_250));
        let line = Message(vec![(2, Value::Varint(1_700_000_001_500)), (5, Value::Bytes(b"NET:OPEN".to_vec()))]);
        let answer = logs(&Message(vec![(1, Value::Bytes(line.encode()))]).encode()).unwrap();
        let read = GetSandboxLogsResponse::decode(&*answer).unwrap();
        assert_eq!(
            read.logs[0].event_time,
            Some(prost_types::Timestamp { seconds: 1_700_000_001, nanos: 500_000_000 })
        );
        assert_eq!(read.logs[0].message, "NET:OPEN");
    }

    #[test]
    fn deletes_and_pages() {
        let read = |b: Vec<u8>| DeleteSandboxResponse::decode(&*b).unwrap().outcome;
        assert_eq!(read(deleted(&Message(vec![(1, Value::Varint(1))]).encode()).unwrap()), 1);
        assert_eq!(read(already_absent()), 3);
        let (bytes, offset, limit) =
            list(&Message(vec![(1, Value::Varint(2)), (2, Value::Bytes(b"4".to_vec()))]).encode()).unwrap();
        assert_eq!((decode(&bytes).unwrap().varint(2), offset, limit), (Some(4), 4, 2));
        let two = Message(vec![(1, Value::Bytes(vec![])), (1, Value::Bytes(vec![]))]).encode();
        assert_eq!(decode(&listed(&two, 4, 2).unwrap()).unwrap().string(2), "6", "a full page: a next token");
        assert_eq!(decode(&listed(&two, 4, 3).unwrap()).unwrap().string(2), "", "the last page");
    }
}
