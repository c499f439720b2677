//! The address a request came from: the TCP peer, or, when the peer is a reverse proxy
//! named in `LENS_TRUSTED_PROXIES`, the client it forwards for (`Forwarded: for=` or
//! `X-Forwarded-For`). Anyone else's forwarding headers are ignored, so a client cannot
//! pick its own address to dodge the login limits.

use std::net::IpAddr;

use axum::http::HeaderMap;
use lens_sandbox::egress::Cidr;

/// Parses `LENS_TRUSTED_PROXIES` entries: addresses or CIDR ranges. `Err` names the first
/// entry that is neither.
pub fn parse_trusted(entries: &[String]) -> anyhow::Result<Vec<Cidr>> {
    entries
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .map(|e| {
            let single = e.parse::<IpAddr>().ok().map(|ip| format!("{ip}/{}", if ip.is_ipv4() { 32 } else { 128 }));
            Cidr::parse(single.as_deref().unwrap_or(e))
                .ok_or_else(|| anyhow::anyhow!("LENS_TRUSTED_PROXIES: `{e}` is neither an address nor a CIDR range"))
        })
        .collect()
}

/// The client's address. Through trusted proxies, the forwarded chain is read from its
/// right (the hop nearest Lens) and the first address that is not a trusted proxy is
/// the client; a hop that names no address ends the walk at the hop before it.
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &[Cidr]) -> IpAddr {
    let is_trusted = |ip: IpAddr| trusted.iter().any(|c| c.contains(ip));
    if !is_trusted(peer) {
        return peer;
    }
    let chain = forwarded_for(headers);
    let mut client = peer;
    for hop in chain.iter().rev() {
        let Some(ip) = hop else { break };
        client = *ip;
        if !is_trusted(*ip) {
            break;
        }
    }
    client
}

/// The forwarded chain, left (the original client) to right: `Forwarded`'s `for=`
/// values where that header is sent, else `X-Forwarded-For`'s. `None`: a hop with no
/// address (`unknown`, an obfuscated name, garbage).
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let values = |name: &str| headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).collect::<Vec<_>>();
    let forwarded = values("forwarded");
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|line| line.split(','))
            .map(|element| {
                element
                    .split(';')
                    .filter_map(|pair| pair.split_once('='))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case("for"))
                    .and_then(|(_, v)| node_ip(v))
            })
            .collect();
    }
    values("x-forwarded-for").iter().flat_map(|line| line.split(',')).map(node_ip).collect()
}

/// An address as a forwarding header writes it: `1.2.3.4`, `1.2.3.4:80`, `"[::1]:80"`, `::1`.
fn node_ip(node: &str) -> Option<IpAddr> {
    let node = node.trim().trim_matches('"');
    if let Ok(ip) = node.parse() {
        return Some(ip);
    }
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split_once(']').and_then(|(ip, _)| ip.parse().ok());
    }
    node.rsplit_once(':').and_then(|(ip, port)| port.parse::<u16>().ok().and(ip.parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forwarding_headers_count_only_from_a_trusted_proxy() {
        let trusted = parse_trusted(&["127.0.0.1".into(), "10.0.0.0/8".into()]).unwrap();
        let xff = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(client_ip(ip("127.0.0.1"), &xff, &trusted), ip("203.0.113.9"));
        assert_eq!(client_ip(ip("198.51.100.4"), &xff, &trusted), ip("198.51.100.4"), "a stranger's header is ignored");
        assert_eq!(client_ip(ip("127.0.0.1"), &HeaderMap::new(), &trusted), ip("127.0.0.1"), "no header: the proxy");
        assert_eq!(client_ip(ip("127.0.0.1"), &xff, &[]), ip("127.0.0.1"), "no trusted proxies: the peer");
    }

    #[test]
    fn the_chain_is_read_from_the_right_past_trusted_hops() {
        let trusted = parse_trusted(&["127.0.0.1".into(), "10.0.0.0/8".into()]).unwrap();
        // The client wrote a fake first hop; the proxies appended what they saw.
        let chain = headers(&[("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.1.2.3")]);
        assert_eq!(client_ip(ip("127.0.0.1"), &chain, &trusted), ip("203.0.113.9"));
        let two_lines = headers(&[("x-forwarded-for", "1.1.1.1"), ("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(client_ip(ip("127.0.0.1"), &two_lines, &trusted), ip("203.0.113.9"));
        let hidden = headers(&[("x-forwarded-for", "203.0.113.9, unknown, 10.1.2.3")]);
        assert_eq!(client_ip(ip("127.0.0.1"), &hidden, &trusted), ip("10.1.2.3"), "an unknown hop ends the walk");
    }

    #[test]
    fn forwarded_takes_precedence_and_its_spellings_parse() {
        let trusted = parse_trusted(&["::1".into()]).unwrap();
        let h = headers(&[
            ("forwarded", "for=\"[2001:db8:cafe::17]:4711\";proto=https, For=198.51.100.7:80"),
            ("x-forwarded-for", "1.1.1.1"),
        ]);
        assert_eq!(client_ip(ip("::1"), &h, &trusted), ip("198.51.100.7"));
        let h = headers(&[("forwarded", "for=192.0.2.43;proto=https")]);
        assert_eq!(client_ip(ip("::1"), &h, &trusted), ip("192.0.2.43"));
    }

    #[test]
    fn a_bad_entry_is_named() {
        assert_eq!(parse_trusted(&["10.0.0.0/8".into(), " ".into()]).unwrap().len(), 1);
        assert!(parse_trusted(&["proxy.example".into()]).unwrap_err().to_string().contains("`proxy.example`"));
    }
}
