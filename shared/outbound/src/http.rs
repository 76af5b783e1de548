//! Webhook deliveries over reqwest, behind an SSRF guard.
//!
//! A webhook URL is chosen by a user, so without a guard the service would POST wherever a user
//! points it: its own loopback admin ports, the cloud metadata endpoint (169.254.169.254), hosts
//! on the private network. Unless `allow_private` is set, a delivery only goes to `https` URLs
//! whose every address is public. The check happens after DNS resolution, inside the resolver the
//! client connects with, so a name that resolves to a private address (or is re-pointed there
//! after the webhook was created) is refused on every delivery. IP-literal hosts never reach a
//! resolver, so they are checked directly.

use std::error::Error as StdError;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use booktr_ports::http::MAX_ANSWER_BODY;
use booktr_ports::{HttpAnswer, HttpOut, HttpOutError};
use bytes::Bytes;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect::Policy;
use reqwest::Url;
use tracing::{debug, warn};

/// Outbound HTTP for webhooks. One client (one connection pool) for the process.
pub struct ReqwestHttp {
    client: reqwest::Client,
    allow_private: bool,
}

impl ReqwestHttp {
    /// `allow_private` turns the SSRF guard off (plain http and private addresses allowed): for
    /// local development and tests only (`BOOKTR_WEBHOOK_ALLOW_PRIVATE`).
    pub fn new(allow_private: bool) -> Result<Self, HttpOutError> {
        let client = reqwest::Client::builder()
            // A redirect would lead the request to a destination the guard never saw in the URL;
            // the receiver's 3xx is reported as its answer instead.
            .redirect(Policy::none())
            // Through a proxy the resolver would only see the proxy's name, not the destination.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver { allow_private }))
            .user_agent(concat!("booktr-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| HttpOutError::Failed(format!("cannot build the HTTP client: {e}")))?;
        Ok(ReqwestHttp {
            client,
            allow_private,
        })
    }

    /// Refuses a URL by its scheme and, for IP-literal hosts, its address. Names are checked by
    /// the resolver when the request connects.
    fn check_url(&self, url: &str) -> Result<Url, HttpOutError> {
        let parsed =
            Url::parse(url).map_err(|e| HttpOutError::Failed(format!("invalid URL: {e}")))?;
        match parsed.scheme() {
            "https" => {}
            "http" if self.allow_private => {}
            "http" => return Err(HttpOutError::Blocked("only https URLs are allowed".into())),
            other => {
                return Err(HttpOutError::Blocked(format!(
                    "the URL scheme '{other}' is not allowed"
                )))
            }
        }
        let Some(host) = parsed.host_str() else {
            return Err(HttpOutError::Failed("the URL has no host".into()));
        };
        // The URL parser has already normalised literals ("127.1" is 127.0.0.1); IPv6 ones keep
        // their brackets.
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>();
        if let Ok(ip) = literal {
            if !self.allow_private && is_forbidden(ip) {
                return Err(HttpOutError::Blocked(format!(
                    "{ip} is not a public address"
                )));
            }
        }
        Ok(parsed)
    }
}

#[async_trait]
impl HttpOut for ReqwestHttp {
    fn allows_private(&self) -> bool {
        self.allow_private
    }

    async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<HttpAnswer, HttpOutError> {
        let url = self.check_url(url)?;
        let mut request = self.client.post(url).timeout(timeout).body(body);
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut response = request.send().await.map_err(classify)?;
        let status = response.status().as_u16();
        // Only the start of the body is kept, so a receiver cannot make us buffer a large answer.
        let mut kept: Vec<u8> = Vec::new();
        while kept.len() < MAX_ANSWER_BODY {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = MAX_ANSWER_BODY - kept.len();
                    kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                Ok(None) => break,
                // The status is what decides the delivery; a body cut short only loses the excerpt.
                Err(e) => {
                    debug!(error = %e, "webhook receiver's answer body broke off");
                    break;
                }
            }
        }
        Ok(HttpAnswer {
            status,
            body: String::from_utf8_lossy(&kept).into_owned(),
        })
    }
}

/// Maps a reqwest error, finding the guard's refusal inside the connect error that wraps it.
fn classify(error: reqwest::Error) -> HttpOutError {
    let mut source: Option<&(dyn StdError + 'static)> = error.source();
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return HttpOutError::Blocked(refused.0.clone());
        }
        source = cause.source();
    }
    if error.is_timeout() {
        return HttpOutError::Timeout;
    }
    // The chain's innermost message ("connection refused", "dns error") is the useful one.
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    HttpOutError::Failed(text)
}

/// The resolver's refusal, found again by [`classify`] in the error chain.
#[derive(Debug)]
struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for Refused {}

/// Resolves with the system resolver and refuses a name if any of its addresses is forbidden.
/// Refusing (rather than dropping the bad addresses) keeps a half-private name from working
/// intermittently.
struct GuardedResolver {
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private {
                if let Some(bad) = addrs.iter().find(|a| is_forbidden(a.ip())) {
                    warn!(host = %host, address = %bad.ip(), "webhook destination refused");
                    let refused = Refused(format!(
                        "{host} resolves to {}, which is not a public address",
                        bad.ip()
                    ));
                    return Err(Box::new(refused) as Box<dyn StdError + Send + Sync>);
                }
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Whether a webhook may not be delivered to this address: anything that is not a globally
/// routable unicast address (private, loopback, link-local, unspecified, multicast, broadcast,
/// CGNAT, reserved, benchmarking, documentation, unique-local), including every IPv6 form that
/// carries an IPv4 address (see [`carried_v4`]) when what it carries is one of those.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking 198.18/15
        || a >= 240 // reserved
}

fn forbidden_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    if ip.is_loopback() || ip.is_unspecified() || ip.is_multicast() {
        return true;
    }
    // The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) is never globally reachable, and its
    // operator may embed the IPv4 address at any of RFC 6052's offsets: the whole prefix is
    // refused rather than guessing where the address sits.
    if segments[..3] == [0x64, 0xff9b, 1] {
        return true;
    }
    let carried = carried_v4(ip);
    if !carried.is_empty() {
        return carried.into_iter().any(forbidden_v4);
    }
    (segments[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (segments[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (segments[0] & 0xffc0) == 0xfec0 // deprecated site-local fec0::/10
        || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation 2001:db8::/32
}

/// The IPv4 addresses an IPv6 address leads to, for the forms that carry one: a packet sent to
/// such an address is delivered (by the host's own stack, a NAT64 gateway, a 6to4 or Teredo
/// relay) to the IPv4 address inside it, so the guard judges that address. Empty for the rest.
fn carried_v4(ip: Ipv6Addr) -> Vec<Ipv4Addr> {
    let bits = u128::from(ip);
    let last_32 = Ipv4Addr::from(bits as u32);
    match ip.segments() {
        // IPv4-mapped ::ffff:a.b.c.d (what a dual-stack socket connects to as IPv4).
        [0, 0, 0, 0, 0, 0xffff, _, _] => vec![last_32],
        // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks).
        [0, 0, 0, 0, 0, 0, _, _] => vec![last_32],
        // IPv4-translated ::ffff:0:a.b.c.d (SIIT, RFC 2765).
        [0, 0, 0, 0, 0xffff, 0, _, _] => vec![last_32],
        // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => vec![last_32],
        // 6to4 2002::/16: the relay's IPv4 address in bits 16..48 (RFC 3056).
        [0x2002, ..] => vec![Ipv4Addr::from((bits >> 80) as u32)],
        // Teredo 2001::/32 (RFC 4380): the server's address in bits 32..64, the client's in the
        // last 32 bits inverted. Either being private means the tunnel ends inside a network.
        [0x2001, 0, ..] => vec![
            Ipv4Addr::from((bits >> 64) as u32),
            Ipv4Addr::from(!(bits as u32)),
        ],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("test address")
    }

    #[test]
    fn non_public_addresses_are_forbidden() {
        for s in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "100.127.255.254",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.10",
            "198.51.100.1",
            "203.0.113.7",
            "::1",
            "::",
            "fd00::1",
            "fc00::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:a00:1::1",
        ] {
            assert!(is_forbidden(ip(s)), "{s} should be forbidden");
        }
    }

    #[test]
    fn every_ipv6_form_that_carries_a_private_ipv4_address_is_forbidden() {
        for (form, s) in [
            ("mapped, loopback", "::ffff:7f00:1"),
            ("mapped, metadata", "::ffff:a9fe:a9fe"),
            ("compatible, loopback", "::127.0.0.1"),
            ("compatible, private", "::a00:1"),
            ("compatible, CGNAT", "::100.64.0.1"),
            ("translated, loopback", "::ffff:0:7f00:1"),
            ("translated, private", "::ffff:0:c0a8:101"),
            ("translated, metadata", "::ffff:0:169.254.169.254"),
            ("NAT64 well-known, loopback", "64:ff9b::7f00:1"),
            ("NAT64 well-known, metadata", "64:ff9b::169.254.169.254"),
            ("NAT64 local-use /96, loopback", "64:ff9b:1::7f00:1"),
            (
                "NAT64 local-use /48 offset, loopback",
                "64:ff9b:1:7f00:0:100::",
            ),
            ("NAT64 local-use, public", "64:ff9b:1::808:808"),
            ("6to4, loopback", "2002:7f00:1::1"),
            ("6to4, metadata", "2002:a9fe:a9fe::1"),
            ("6to4, private", "2002:c0a8:101:1::1"),
            // Client 127.0.0.1 is 0x7f000001, inverted 0x80fffffe; server 65.54.227.120.
            (
                "Teredo, loopback client",
                "2001:0:4136:e378:8000:63bf:80ff:fffe",
            ),
            // Client 10.0.0.1 inverted.
            (
                "Teredo, private client",
                "2001:0:4136:e378:8000:63bf:f5ff:fffe",
            ),
            // Client 169.254.169.254 inverted.
            (
                "Teredo, metadata client",
                "2001:0:4136:e378:8000:63bf:5601:5601",
            ),
            // Server 10.0.0.1, client 8.8.8.8.
            ("Teredo, private server", "2001:0:a00:1:8000:63bf:f7f7:f7f7"),
        ] {
            assert!(is_forbidden(ip(s)), "{form}: {s} should be forbidden");
        }
    }

    #[test]
    fn ipv6_forms_that_carry_a_public_ipv4_address_are_allowed() {
        for (form, s) in [
            ("translated", "::ffff:0:808:808"),
            ("NAT64 well-known", "64:ff9b::808:808"),
            ("6to4", "2002:808:808::1"),
            // Server 65.54.227.120, client 8.8.8.8 (inverted 0xf7f7f7f7).
            ("Teredo", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"),
        ] {
            assert!(!is_forbidden(ip(s)), "{form}: {s} should be allowed");
        }
    }

    #[test]
    fn public_addresses_are_allowed() {
        for s in [
            "93.184.215.14",
            "8.8.8.8",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_forbidden(ip(s)), "{s} should be allowed");
        }
    }

    async fn post(http: &ReqwestHttp, url: &str) -> Result<HttpAnswer, HttpOutError> {
        http.post(url, &[], Bytes::from_static(b"{}"), Duration::from_secs(5))
            .await
    }

    #[tokio::test]
    async fn the_guard_refuses_private_literals_and_names_before_connecting() {
        let http = ReqwestHttp::new(false).expect("client");
        for url in [
            "https://127.0.0.1/hook",
            "https://10.0.0.1/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/hook",
            "https://[::ffff:127.0.0.1]/hook",
            "https://[::ffff:0:7f00:1]/hook",
            "https://[64:ff9b:1::7f00:1]/hook",
            "https://[64:ff9b::a9fe:a9fe]/latest/meta-data",
            "https://[::7f00:1]/hook",
            "https://[2002:7f00:1::1]/hook",
            "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook",
            "https://localhost/hook",
            "http://example.com/hook",
            "ftp://example.com/hook",
        ] {
            let result = post(&http, url).await;
            assert!(
                matches!(result, Err(HttpOutError::Blocked(_))),
                "{url}: {result:?}"
            );
        }
    }

    async fn receiver() -> String {
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(|body: Bytes| async move {
                (
                    axum::http::StatusCode::ACCEPTED,
                    format!("got {}", body.len()),
                )
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/hook")
    }

    #[tokio::test]
    async fn with_allow_private_a_local_receiver_is_reached() {
        let url = receiver().await;
        let http = ReqwestHttp::new(true).expect("client");
        let answer = post(&http, &url).await.expect("delivered");
        assert_eq!(answer.status, 202);
        assert_eq!(answer.body, "got 2");
        // The same receiver through a name that resolves to loopback.
        let by_name = url.replace("127.0.0.1", "localhost");
        assert_eq!(post(&http, &by_name).await.expect("delivered").status, 202);
    }

    #[tokio::test]
    async fn with_the_guard_on_a_local_receiver_is_refused_even_over_https() {
        let url = receiver().await.replace("http://", "https://");
        let http = ReqwestHttp::new(false).expect("client");
        assert!(matches!(
            post(&http, &url).await,
            Err(HttpOutError::Blocked(_))
        ));
        let by_name = url.replace("127.0.0.1", "localhost");
        assert!(matches!(
            post(&http, &by_name).await,
            Err(HttpOutError::Blocked(_))
        ));
    }

    #[tokio::test]
    async fn an_answer_body_is_cut_to_two_kib() {
        let app = axum::Router::new().route(
            "/big",
            axum::routing::post(|| async {
                (
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "é".repeat(5000),
                )
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, app).await });
        let http = ReqwestHttp::new(true).expect("client");
        let answer = post(&http, &format!("http://{addr}/big"))
            .await
            .expect("answer");
        assert_eq!(answer.status, 500);
        assert!(answer.body.len() <= MAX_ANSWER_BODY + 3);
        assert!(answer.body.starts_with("éé"));
    }

    #[tokio::test]
    async fn a_closed_port_is_a_failure_not_a_block() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        drop(listener);
        let http = ReqwestHttp::new(true).expect("client");
        let result = post(&http, &format!("http://{addr}/hook")).await;
        assert!(matches!(result, Err(HttpOutError::Failed(_))), "{result:?}");
    }
}
