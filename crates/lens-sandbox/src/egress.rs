//! Who decides what a sandbox may reach: listed host names only, resolved here (never by
//! the sandbox), to public unicast addresses or an admin's trusted ranges, and never an
//! address written as a literal. Every decision is one sentence the admin can read.

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
};

/// An address range such as `10.0.0.0/8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    pub fn parse(s: &str) -> Option<Self> {
        let (addr, prefix) = s.trim().split_once('/')?;
        let addr: IpAddr = addr.parse().ok()?;
        let prefix: u8 = prefix.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then(|| Self { addr: mask(addr, prefix), prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv4() == self.addr.is_ipv4() && mask(ip, self.prefix) == self.addr
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let m = if prefix == 0 { 0 } else { u32::MAX << (32 - u32::from(prefix)) };
            IpAddr::V4(Ipv4Addr::from(bits & m))
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let m = if prefix == 0 { 0 } else { u128::MAX << (128 - u32::from(prefix)) };
            IpAddr::V6(Ipv6Addr::from(bits & m))
        }
    }
}

/// A DNS host name: labels of letters, digits and `-`, not ending in a number (so never
/// an address in disguise).
pub fn is_host_name(s: &str) -> bool {
    s.len() <= 253
        && s.parse::<IpAddr>().is_err()
        && !s.rsplit('.').next().is_some_and(|tld| tld.chars().all(|c| c.is_ascii_digit()))
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// Whether an address is public unicast: not private, loopback, link-local, shared,
/// multicast, reserved, documentation or a v6 wrapper around a v4 address.
pub fn is_public(ip: IpAddr) -> bool {
    const V4_BLOCKED: &[&str] = &[
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/3",
    ];
    const V6_BLOCKED: &[&str] = &["2001::/32", "2001:db8::/32", "2002::/16"];
    match ip {
        IpAddr::V4(_) => !V4_BLOCKED.iter().filter_map(|c| Cidr::parse(c)).any(|c| c.contains(ip)),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let global = Cidr::parse("2000::/3").is_some_and(|c| c.contains(ip));
            global && !V6_BLOCKED.iter().filter_map(|c| Cidr::parse(c)).any(|c| c.contains(ip))
        }
    }
}

/// What a sandbox may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    /// Host names allowed (exact, lowercase).
    pub hosts: Vec<String>,
    /// Ranges allowed besides public addresses.
    pub trusted: Vec<Cidr>,
}

pub use lens_types::EgressDecision;

/// Why a connection is refused: a normal outcome, not a failure of Lens. Its sentence
/// goes to the egress log and to the program that asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("`{0}` has no port")]
    NoPort(String),
    #[error("`{0}` has no valid port")]
    BadPort(String),
    #[error("`{0}` is an address; only listed host names may be reached")]
    Address(String),
    #[error("`{0}` is not on the sandbox's list of allowed hosts")]
    NotListed(String),
    #[error("`{host}` does not resolve ({cause})")]
    Unresolved { host: String, cause: String },
    #[error("`{host}` resolves only to addresses that are not public ({found})")]
    NotPublic { host: String, found: String },
    #[error("connecting to {addr} failed: {cause}")]
    Unreachable { addr: String, cause: String },
    #[error("`{0}` is not a server name")]
    NotAServerName(String),
    #[error("{host}'s certificate was not accepted: {cause}")]
    Untrusted { host: String, cause: String },
    #[error("{host}: {cause}")]
    Handshake { host: String, cause: String },
}

/// The host of a CONNECT target (`host:port`), as the lists spell hosts.
pub fn host_of(target: &str) -> String {
    let host = target.rsplit_once(':').map_or(target, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

impl EgressPolicy {
    /// Decides a CONNECT target (`host:port`): the address to connect to, or why not.
    pub async fn decide(&self, target: &str) -> Result<SocketAddr, Refusal> {
        self.decide_with(target, &[]).await
    }

    /// [`decide`](Self::decide), with `also` allowed besides the list (the hosts a
    /// conversation's owner allowed for it).
    pub async fn decide_with(&self, target: &str, also: &[String]) -> Result<SocketAddr, Refusal> {
        let (_, port) = target.rsplit_once(':').ok_or_else(|| Refusal::NoPort(target.to_owned()))?;
        let port: u16 = port.parse().map_err(|_| Refusal::BadPort(target.to_owned()))?;
        let host = host_of(target);
        if host.parse::<IpAddr>().is_ok() {
            return Err(Refusal::Address(host));
        }
        if !self.hosts.contains(&host) && !also.contains(&host) {
            return Err(Refusal::NotListed(host));
        }
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| Refusal::Unresolved { host: host.clone(), cause: e.to_string() })?
            .collect();
        addrs.iter().find(|a| is_public(a.ip()) || self.trusted.iter().any(|c| c.contains(a.ip()))).copied().ok_or_else(
            || {
                let found: Vec<String> = addrs.iter().map(|a| a.ip().to_string()).collect();
                Refusal::NotPublic { host, found: found.join(", ") }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_public_addresses() {
        let c = Cidr::parse("10.1.2.3/8").unwrap();
        assert_eq!(c.to_string(), "10.0.0.0/8");
        assert!(c.contains("10.200.0.1".parse().unwrap()));
        assert!(!c.contains("11.0.0.1".parse().unwrap()));
        assert!(Cidr::parse("10.0.0.0/33").is_none() && Cidr::parse("nope/8").is_none());
        for private in ["127.0.0.1", "10.0.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "::1", "fd00::1"] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        assert!(!is_public("::ffff:10.0.0.1".parse().unwrap()));
        for public in ["1.1.1.1", "151.101.0.223", "2a04:4e42::223"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn host_names() {
        assert!(is_host_name("files.example.org"));
        assert!(is_host_name("mirror"));
        for bad in ["10.0.0.1", "a..b", "-a.b", "a_b.c", "1.2.3.4.5", "2130706433"] {
            assert!(!is_host_name(bad), "{bad}");
        }
    }
}
