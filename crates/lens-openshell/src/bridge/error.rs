//! What can go wrong translating a message between the two protocols, and how each is
//! answered: a request Lens could not have meant (a page token that is no offset, an
//! interactive exec without its start frame) is INVALID_ARGUMENT; anything else is the
//! bridge's own fault, INTERNAL.

use tonic::Status;

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("a field runs past the message's end")]
    Truncated,
    #[error("groups are not used here")]
    Group,
    #[error("{0}")]
    Decode(#[from] prost::DecodeError),
    #[error("field {0} is not a message")]
    NotAMessage(u32),
    #[error("endpoint field {0} is not an enum")]
    NotAnEnum(u32),
    #[error("endpoint field {0} is not a string")]
    NotAString(u32),
    #[error("endpoint field {field}: no value {value}")]
    NoSuchValue { field: u32, value: u64 },
    #[error("bad page token {0:?}")]
    PageToken(String),
    #[error("the first frame must be `start`")]
    NoStart,
}

impl From<WireError> for Status {
    fn from(e: WireError) -> Self {
        match e {
            WireError::PageToken(_) | WireError::NoStart => Status::invalid_argument(e.to_string()),
            e => Status::internal(format!("the test bridge could not translate: {e}")),
        }
    }
}
