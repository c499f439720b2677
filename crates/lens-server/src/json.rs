//! `ApiJson`: the JSON body extractor whose rejections speak the error envelope.

use axum::{
    extract::{FromRequest, Request, rejection::JsonRejection},
    http::StatusCode,
};
use serde::de::DeserializeOwned;
use serde_json::{Number, Value};

use crate::AppError;

/// Like `axum::Json`, but a bad body becomes an [`AppError`]: 413 when too large,
/// 415 without a JSON content type, 400 for malformed JSON, invalid UTF-8 or fields
/// of the wrong shape, and for a body that is not an object (serde would read an array's
/// items as a struct's fields in order). A whole number written with a fraction
/// (`261.0`) is the number it names, as JSON Schema's `integer` says.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let mut value = match axum::Json::<Value>::from_request(req, state).await {
            Ok(axum::Json(v)) => v,
            Err(rejection) => return Err(map_rejection(&rejection)),
        };
        if !value.is_object() {
            return Err(AppError::BadRequest("the request body must be a JSON object".into()));
        }
        whole_numbers(&mut value);
        serde_path_to_error::deserialize(value)
            .map(Self)
            .map_err(|e| AppError::BadRequest(format!("the request body is not valid: {e}")))
    }
}

/// Every float of `value` with no fraction, within an integer's range, made that integer.
fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            // Past 2^53 a float no longer names one integer: left as it is.
            if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
                *n = if f < 0.0 { Number::from(f as i64) } else { Number::from(f as u64) };
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

fn map_rejection(rejection: &JsonRejection) -> AppError {
    match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => AppError::PayloadTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            AppError::UnsupportedMediaType("send the body as JSON with Content-Type: application/json".into())
        }
        _ => AppError::BadRequest(format!("the request body is not valid: {}", rejection.body_text())),
    }
}

#[cfg(test)]
mod tests {
    use super::whole_numbers;
    use serde_json::json;

    #[test]
    fn whole_numbers_written_with_a_fraction_are_integers_and_others_stay() {
        let mut v = json!({"days": 261.0, "neg": -3.0, "half": 0.5, "deep": [{"n": 7.0}], "huge": 1e300, "int": 5});
        whole_numbers(&mut v);
        assert_eq!(v, json!({"days": 261, "neg": -3, "half": 0.5, "deep": [{"n": 7}], "huge": 1e300, "int": 5}));
        let days: u32 = serde_json::from_value(v["days"].clone()).unwrap();
        assert_eq!(days, 261);
    }
}
