//! Protocol Buffers messages as their fields on the wire, to change a few fields of a
//! message without a schema for the rest: what is not touched goes through byte for byte.

use prost::encoding::{WireType, decode_key, decode_varint, encode_key, encode_varint};

use super::error::WireError;

/// One field's value as the wire carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Varint(u64),
    Fixed64([u8; 8]),
    Bytes(Vec<u8>),
    Fixed32([u8; 4]),
}

/// A message: its fields in the order they came.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message(pub Vec<(u32, Value)>);

impl Message {
    pub fn decode(mut buf: &[u8]) -> Result<Self, WireError> {
        let mut fields = Vec::new();
        while !buf.is_empty() {
            let (number, kind) = decode_key(&mut buf)?;
            let value = match kind {
                WireType::Varint => Value::Varint(decode_varint(&mut buf)?),
                WireType::SixtyFourBit => {
                    Value::Fixed64(take(&mut buf, 8)?.try_into().map_err(|_| WireError::Truncated)?)
                }
                WireType::ThirtyTwoBit => {
                    Value::Fixed32(take(&mut buf, 4)?.try_into().map_err(|_| WireError::Truncated)?)
                }
                WireType::LengthDelimited => {
                    let len = decode_varint(&mut buf)?;
                    Value::Bytes(take(&mut buf, usize::try_from(len).map_err(|_| WireError::Truncated)?)?.to_vec())
                }
                WireType::StartGroup | WireType::EndGroup => return Err(WireError::Group),
            };
            fields.push((number, value));
        }
        Ok(Self(fields))
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (number, value) in &self.0 {
            match value {
                Value::Varint(v) => {
                    encode_key(*number, WireType::Varint, &mut out);
                    encode_varint(*v, &mut out);
                }
                Value::Fixed64(b) => {
                    encode_key(*number, WireType::SixtyFourBit, &mut out);
                    out.extend_from_slice(b);
                }
                Value::Fixed32(b) => {
                    encode_key(*number, WireType::ThirtyTwoBit, &mut out);
                    out.extend_from_slice(b);
                }
                Value::Bytes(b) => {
                    encode_key(*number, WireType::LengthDelimited, &mut out);
                    encode_varint(b.len() as u64, &mut out);
                    out.extend_from_slice(b);
                }
            }
        }
        out
    }

    /// The last value of field `number` (as a singular field is read).
    pub fn get(&self, number: u32) -> Option<&Value> {
        self.0.iter().rev().find(|(n, _)| *n == number).map(|(_, v)| v)
    }

    pub fn bytes(&self, number: u32) -> Option<&[u8]> {
        match self.get(number) {
            Some(Value::Bytes(b)) => Some(b),
            _ => None,
        }
    }

    pub fn string(&self, number: u32) -> String {
        self.bytes(number).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default()
    }

    pub fn varint(&self, number: u32) -> Option<u64> {
        match self.get(number) {
            Some(Value::Varint(v)) => Some(*v),
            _ => None,
        }
    }

    /// Takes every value of field `number` out.
    pub fn take(&mut self, number: u32) -> Vec<Value> {
        let (taken, kept) = std::mem::take(&mut self.0).into_iter().partition(|(n, _)| *n == number);
        self.0 = kept;
        taken.into_iter().map(|(_, v)| v).collect()
    }

    pub fn push(&mut self, number: u32, value: Value) {
        self.0.push((number, value));
    }

    pub fn push_string(&mut self, number: u32, text: &str) {
        if !text.is_empty() {
            self.push(number, Value::Bytes(text.as_bytes().to_vec()));
        }
    }

    /// Changes, in place, each message held in field `number` (each entry of a repeated or
    /// map field).
    pub fn each(
        &mut self,
        number: u32,
        mut change: impl FnMut(&mut Message) -> Result<(), WireError>,
    ) -> Result<(), WireError> {
        for (n, value) in &mut self.0 {
            if *n != number {
                continue;
            }
            let Value::Bytes(bytes) = value else { return Err(WireError::NotAMessage(number)) };
            let mut inner = Message::decode(bytes)?;
            change(&mut inner)?;
            *bytes = inner.encode();
        }
        Ok(())
    }
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Result<&'a [u8], WireError> {
    if buf.len() < n {
        return Err(WireError::Truncated);
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    #[test]
    fn a_message_goes_back_byte_for_byte_and_fields_change_in_place() {
        use crate::proto::openshell::v1::{ExecSandboxRequest, GetSandboxRequest};
        let r = ExecSandboxRequest {
            sandbox: "lens-chat-1".into(),
            command: vec!["sh".into(), "-c".into(), "true".into()],
            environment: [("A".to_string(), "b".to_string())].into_iter().collect(),
            stdin: vec![0, 1, 2],
            no_login_shell: true,
            execution_timeout: Some(prost_types::Duration { seconds: 5, nanos: 0 }),
            workspace_scope: crate::workspace_scope(),
            ..Default::default()
        };
        let bytes = r.encode_to_vec();
        let mut m = Message::decode(&bytes).unwrap();
        assert_eq!(m.encode(), bytes);
        assert_eq!(m.string(1), "lens-chat-1");
        m.take(1);
        m.push_string(1, "other");
        assert_eq!(ExecSandboxRequest::decode(&*m.encode()).unwrap().sandbox, "other");
        let mut g = Message::decode(
            &GetSandboxRequest { name: "x".into(), workspace_scope: crate::workspace_scope() }.encode_to_vec(),
        )
        .unwrap();
        g.each(2, |selector| {
            assert_eq!(selector.string(1), "default");
            Ok(())
        })
        .unwrap();
        assert!(Message::decode(&[0x0a, 0x05, b'a']).is_err(), "a field past the end is refused");
    }
}
