//! What servers say about when to try again: gRPC's `google.rpc.RetryInfo` status detail and
//! HTTP's `Retry-After` header. The wait they give replaces the policy's backoff.

use std::time::Duration;

use tonic::Status;

/// The wait a gRPC status asks for before trying again (a `google.rpc.RetryInfo` in its
/// details), if any.
pub(crate) fn retry_info(status: &Status) -> Option<Duration> {
    use gcloud_sdk::google::rpc::{RetryInfo, Status as RpcStatus};
    use gcloud_sdk::prost::Message;
    if status.details().is_empty() {
        return None;
    }
    let rpc = RpcStatus::decode(status.details()).ok()?;
    let info = rpc
        .details
        .iter()
        .find(|a| a.type_url.ends_with("/google.rpc.RetryInfo"))?;
    let d = RetryInfo::decode(info.value.as_slice()).ok()?.retry_delay?;
    Some(Duration::new(
        d.seconds.max(0) as u64,
        d.nanos.clamp(0, 999_999_999) as u32,
    ))
}

/// The wait an HTTP response's `Retry-After` header asks for, when it gives seconds (the
/// HTTP-date form is not used by Google's front ends and is ignored).
pub(crate) fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use tonic::Code;

    /// RESOURCE_EXHAUSTED with a RetryInfo asking for `delay`, as BigQuery sends it.
    pub(crate) fn throttled(delay: Duration) -> Status {
        use gcloud_sdk::google::rpc::{RetryInfo, Status as RpcStatus};
        use gcloud_sdk::prost::Message;
        use gcloud_sdk::prost_types::{Any, Duration as PbDuration};
        let info = RetryInfo {
            retry_delay: Some(PbDuration {
                seconds: delay.as_secs() as i64,
                nanos: delay.subsec_nanos() as i32,
            }),
        };
        let rpc = RpcStatus {
            code: Code::ResourceExhausted as i32,
            message: "throttled".into(),
            details: vec![Any {
                type_url: "type.googleapis.com/google.rpc.RetryInfo".into(),
                value: info.encode_to_vec(),
            }],
        };
        Status::with_details(
            Code::ResourceExhausted,
            "throttled",
            rpc.encode_to_vec().into(),
        )
    }

    #[test]
    fn hints_are_read() {
        let t = throttled(Duration::from_millis(1500));
        assert_eq!(retry_info(&t), Some(Duration::from_millis(1500)));
        assert_eq!(retry_info(&Status::unavailable("x")), None);
        let mut headers = http::HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(http::header::RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert(
            http::header::RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), None);
    }
}
