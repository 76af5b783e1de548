//! Over-long request URIs get the JSON error body like every other error.
//!
//! hyper refuses a URI longer than 65,534 bytes (what `http::Uri` can hold) while it parses the
//! request head, before any service or middleware sees the request, and answers a bare 414 with
//! no body; it has no hook to change that answer, and no buffer size moves the limit. So every
//! connection's bytes pass through [`GuardedIo`] on their way to hyper. It follows HTTP/1 message
//! framing just far enough to know where each request line starts, holds a request line back
//! until it is complete, and when its URI is longer than hyper accepts, drops that request and
//! hands hyper the end of the stream instead. That end comes at a message boundary, so hyper
//! closes the connection cleanly, and on the way out (`poll_shutdown`) the guard writes its own
//! 414 with `{"error": "uri_too_long", "message": ...}`. Which requests are refused does not
//! change: only the answer does.
//!
//! Whatever the guard cannot follow for certain (CONNECT, an `Upgrade`, a body framed in two ways,
//! a malformed chunk) turns it off for the rest of that connection: hyper then decides alone, as
//! before, and a body is never mistaken for a request line.
//!
//! Limitation: a client that pipelines an over-long request behind one still being answered has
//! its connection closed with the earlier answer cut (hyper treats the end of the stream in the
//! middle of a message as an aborted request). Browsers and HTTP libraries do not pipeline.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tracing::warn;

/// hyper's own limit (`u16::MAX - 1`): the guard refuses exactly what hyper would.
pub const MAX_URI_BYTES: usize = 65_534;
/// Room for the method and the version around the URI: a request line longer than the URI limit
/// plus this is refused before its end arrives, so at most this much is ever held.
const REQUEST_LINE_SLACK: usize = 1024;
/// Header lines and chunk-size lines are read up to this length; a longer one that matters for
/// framing turns the guard off.
const MAX_TRACKED_LINE: usize = 8 * 1024;
/// After a refusal the rest of the head is read and dropped, up to this much: closing a socket
/// with unread input makes the kernel send a reset, which can destroy our answer in flight.
const MAX_DISCARD: usize = 1 << 20;
/// Bytes read from the socket at a time while the framing is followed.
const READ_CHUNK: usize = 16 * 1024;

/// A TCP listener whose connections pass through [`GuardedIo`].
pub struct GuardedListener(TcpListener);

impl GuardedListener {
    pub fn new(listener: TcpListener) -> Self {
        GuardedListener(listener)
    }
}

impl Listener for GuardedListener {
    type Io = GuardedIo<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // axum's accept for a TCP listener already retries (and backs off on) failed accepts.
        let (stream, peer) = Listener::accept(&mut self.0).await;
        (GuardedIo::new(stream, peer), peer)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// A connection as hyper sees it: the client's bytes, minus any request whose URI is too long.
pub struct GuardedIo<T> {
    inner: T,
    peer: SocketAddr,
    framing: Framing,
    /// Bytes cleared for hyper and not yet handed over, from `handed`.
    cleared: Vec<u8>,
    handed: usize,
    scratch: Vec<u8>,
    client_done: bool,
    /// Our 414, once the guard has refused, and how much of it is written.
    answer: Option<(Vec<u8>, usize)>,
}

impl<T> GuardedIo<T> {
    pub fn new(inner: T, peer: SocketAddr) -> Self {
        GuardedIo {
            inner,
            peer,
            framing: Framing::default(),
            cleared: Vec::new(),
            handed: 0,
            scratch: Vec::new(),
            client_done: false,
            answer: None,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for GuardedIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.handed < this.cleared.len() {
                let n = buf.remaining().min(this.cleared.len() - this.handed);
                buf.put_slice(&this.cleared[this.handed..this.handed + n]);
                this.handed += n;
                if this.handed == this.cleared.len() {
                    this.cleared.clear();
                    this.handed = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.client_done || this.framing.refused_and_drained() {
                // The end of the stream, as hyper sees it.
                return Poll::Ready(Ok(()));
            }
            if this.framing.is_off() {
                return Pin::new(&mut this.inner).poll_read(cx, buf);
            }
            if this.scratch.is_empty() {
                this.scratch = vec![0; READ_CHUNK];
            }
            let mut read = ReadBuf::new(&mut this.scratch);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                this.client_done = true;
                // A request line cut short goes to hyper as it is: hyper answers it as before.
                this.framing.release_held(&mut this.cleared);
                continue;
            }
            let was_refused = this.framing.is_refused();
            this.framing.feed(&this.scratch[..n], &mut this.cleared);
            if !was_refused && this.framing.is_refused() {
                warn!(peer = %this.peer, limit = MAX_URI_BYTES, "refused a request whose URI is too long");
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for GuardedIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    /// hyper shuts down after its last answer; the refused request's answer goes after it.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.framing.is_refused() {
            let (answer, written) = this.answer.get_or_insert_with(|| (too_long_answer(), 0));
            while *written < answer.len() {
                let n = ready!(Pin::new(&mut this.inner).poll_write(cx, &answer[*written..]))?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                *written += n;
            }
            ready!(Pin::new(&mut this.inner).poll_flush(cx))?;
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// The 414 in the error model's shape (`booktr_api`'s `ApiError`), with a request id as every
/// answer has.
fn too_long_answer() -> Vec<u8> {
    let body = serde_json::json!({
        "error": "uri_too_long",
        "message": format!("the request URI is longer than {MAX_URI_BYTES} bytes"),
    })
    .to_string();
    format!(
        "HTTP/1.1 414 URI Too Long\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         x-request-id: {}\r\nconnection: close\r\n\r\n{body}",
        body.len(),
        booktr_core::ids::new_id()
    )
    .into_bytes()
}

/// Where the client's byte stream is, message by message. Pure: bytes in, bytes for hyper out.
#[derive(Debug, Default)]
struct Framing {
    state: State,
    /// The request line being received, held back from hyper until it is judged.
    held: Vec<u8>,
}

#[derive(Debug, Default)]
enum State {
    /// At or inside a request line (its bytes are in `held`).
    #[default]
    RequestLine,
    Headers(Head),
    /// This many body bytes are still to come.
    Body(u64),
    Chunked(Chunk),
    /// Not followed any more: everything passes.
    Off,
    /// Refused: the rest of the head is read and dropped.
    Discarding {
        line: usize,
        in_request_line: bool,
        total: usize,
    },
    /// Refused and the head dropped: hyper is told the stream ended.
    Refused,
}

#[derive(Debug, Default)]
struct Head {
    /// The current line, up to [`MAX_TRACKED_LINE`].
    line: Vec<u8>,
    line_too_long: bool,
    content_length: Option<u64>,
    transfer_encoding: bool,
    chunked: bool,
    /// An `Upgrade` header or framing the guard cannot be sure of.
    unfollowable: bool,
}

#[derive(Debug)]
enum Chunk {
    /// The chunk-size line, kept for parsing.
    Size(Vec<u8>),
    Data(u64),
    DataCr,
    DataLf,
    /// Trailer lines after the last chunk; the current one is this long.
    Trailers(usize),
}

impl Framing {
    fn is_off(&self) -> bool {
        matches!(self.state, State::Off)
    }

    fn is_refused(&self) -> bool {
        matches!(self.state, State::Discarding { .. } | State::Refused)
    }

    fn refused_and_drained(&self) -> bool {
        matches!(self.state, State::Refused)
    }

    fn release_held(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.held);
    }

    /// Takes the client's next bytes; appends what hyper may see to `out`.
    fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while let Some((&byte, rest)) = input.split_first() {
            match &mut self.state {
                State::Off => {
                    out.extend_from_slice(input);
                    return;
                }
                State::Refused => return,
                // Bodies pass in bulk, not byte by byte.
                State::Body(left) | State::Chunked(Chunk::Data(left)) => {
                    let n = input
                        .len()
                        .min(usize::try_from(*left).unwrap_or(usize::MAX));
                    out.extend_from_slice(&input[..n]);
                    *left -= n as u64;
                    input = &input[n..];
                    if *left == 0 {
                        self.state = match self.state {
                            State::Body(_) => State::RequestLine,
                            _ => State::Chunked(Chunk::DataCr),
                        };
                    }
                    continue;
                }
                // So do a header line's bytes up to its end, which `step` judges.
                State::Headers(head) if byte != b'\n' => {
                    let len = input
                        .iter()
                        .position(|b| *b == b'\n')
                        .unwrap_or(input.len());
                    let (part, after) = input.split_at(len);
                    out.extend_from_slice(part);
                    let room = MAX_TRACKED_LINE.saturating_sub(head.line.len());
                    head.line.extend_from_slice(&part[..len.min(room)]);
                    head.line_too_long |= len > room;
                    input = after;
                    continue;
                }
                _ => {}
            }
            self.step(byte, out);
            input = rest;
        }
    }

    fn step(&mut self, byte: u8, out: &mut Vec<u8>) {
        let state = std::mem::replace(&mut self.state, State::Off);
        self.state = match state {
            State::RequestLine => self.request_line(byte, out),
            State::Headers(head) => {
                out.push(byte);
                headers(head, byte)
            }
            State::Chunked(chunk) => {
                out.push(byte);
                chunked(chunk, byte)
            }
            State::Discarding {
                line,
                in_request_line,
                total,
            } => discarding(line, in_request_line, total + 1, byte),
            // Handled in bulk by `feed`.
            other @ (State::Off | State::Refused | State::Body(_)) => other,
        };
    }

    fn request_line(&mut self, byte: u8, out: &mut Vec<u8>) -> State {
        // hyper skips empty lines before a request line.
        if self.held.is_empty() && (byte == b'\r' || byte == b'\n') {
            out.push(byte);
            return State::RequestLine;
        }
        self.held.push(byte);
        if byte != b'\n' {
            if self.held.len() > MAX_URI_BYTES + REQUEST_LINE_SLACK {
                return self.refuse(true);
            }
            return State::RequestLine;
        }
        let line = self.held.strip_suffix(b"\n").unwrap_or(&self.held);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let (Some(first), Some(last)) = (
            line.iter().position(|b| *b == b' '),
            line.iter().rposition(|b| *b == b' '),
        ) else {
            // Not a request line hyper accepts either: it answers, the guard steps aside.
            out.append(&mut self.held);
            return State::Off;
        };
        if last > first && last - first - 1 > MAX_URI_BYTES {
            return self.refuse(false);
        }
        let connect = line[..first].eq_ignore_ascii_case(b"CONNECT");
        out.append(&mut self.held);
        if connect || last <= first {
            State::Off
        } else {
            State::Headers(Head::default())
        }
    }

    fn refuse(&mut self, in_request_line: bool) -> State {
        self.held = Vec::new();
        State::Discarding {
            line: 0,
            in_request_line,
            total: 0,
        }
    }
}

fn headers(mut head: Head, byte: u8) -> State {
    if byte != b'\n' {
        if head.line.len() < MAX_TRACKED_LINE {
            head.line.push(byte);
        } else {
            head.line_too_long = true;
        }
        return State::Headers(head);
    }
    let line = std::mem::take(&mut head.line);
    let line = line.strip_suffix(b"\r").unwrap_or(&line);
    let too_long = std::mem::take(&mut head.line_too_long);
    if line.is_empty() {
        return end_of_head(head);
    }
    if line.starts_with(b" ") || line.starts_with(b"\t") {
        // A folded header line: obsolete, and how it would be read is not certain.
        return State::Off;
    }
    let Some(colon) = line.iter().position(|b| *b == b':') else {
        return State::Off;
    };
    let name = &line[..colon];
    let value = line[colon + 1..].trim_ascii();
    if name.eq_ignore_ascii_case(b"content-length") {
        let length = std::str::from_utf8(value)
            .ok()
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse::<u64>().ok());
        match (length, head.content_length) {
            (Some(n), None) => head.content_length = Some(n),
            (Some(n), Some(m)) if n == m => {}
            _ => head.unfollowable = true,
        }
    } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
        head.transfer_encoding = true;
        head.chunked = value
            .rsplit(|b| *b == b',')
            .next()
            .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
    } else if name.eq_ignore_ascii_case(b"upgrade") {
        head.unfollowable = true;
    }
    if too_long
        && [&b"content-length"[..], b"transfer-encoding", b"upgrade"]
            .iter()
            .any(|n| name.eq_ignore_ascii_case(n))
    {
        return State::Off;
    }
    State::Headers(head)
}

fn end_of_head(head: Head) -> State {
    if head.unfollowable {
        return State::Off;
    }
    if head.transfer_encoding {
        return if head.chunked && head.content_length.is_none() {
            State::Chunked(Chunk::Size(Vec::new()))
        } else {
            State::Off
        };
    }
    match head.content_length {
        None | Some(0) => State::RequestLine,
        Some(n) => State::Body(n),
    }
}

fn chunked(chunk: Chunk, byte: u8) -> State {
    let next = match chunk {
        Chunk::Size(mut line) => {
            if byte != b'\n' {
                if line.len() >= MAX_TRACKED_LINE {
                    return State::Off;
                }
                line.push(byte);
                Some(Chunk::Size(line))
            } else {
                match chunk_size(&line) {
                    Some(0) => Some(Chunk::Trailers(0)),
                    Some(n) => Some(Chunk::Data(n)),
                    None => None,
                }
            }
        }
        Chunk::DataCr => (byte == b'\r').then_some(Chunk::DataLf),
        Chunk::DataLf => (byte == b'\n').then(|| Chunk::Size(Vec::new())),
        Chunk::Trailers(length) => match byte {
            b'\n' if length == 0 => return State::RequestLine,
            b'\n' => Some(Chunk::Trailers(0)),
            b'\r' => Some(Chunk::Trailers(length)),
            _ if length >= MAX_TRACKED_LINE => None,
            _ => Some(Chunk::Trailers(length + 1)),
        },
        // Handled in bulk by `Framing::feed`.
        Chunk::Data(n) => Some(Chunk::Data(n)),
    };
    next.map_or(State::Off, State::Chunked)
}

/// The size of a chunk-size line (`1a`, `1a;name=value`); None when it is not one.
fn chunk_size(line: &[u8]) -> Option<u64> {
    let line = line.strip_suffix(b"\r")?;
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let rest = &line[digits..];
    if digits == 0 || digits > 15 || !(rest.is_empty() || rest.starts_with(b";")) {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(&line[..digits]).ok()?, 16).ok()
}

fn discarding(line: usize, in_request_line: bool, total: usize, byte: u8) -> State {
    if total > MAX_DISCARD {
        return State::Refused;
    }
    match byte {
        b'\n' if line == 0 && !in_request_line => State::Refused,
        b'\n' => State::Discarding {
            line: 0,
            in_request_line: false,
            total,
        },
        b'\r' => State::Discarding {
            line,
            in_request_line,
            total,
        },
        _ => State::Discarding {
            line: line + 1,
            in_request_line,
            total,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What hyper is handed when `parts` arrive one after another, and whether it was refused.
    fn pass(parts: &[&[u8]]) -> (Vec<u8>, bool) {
        let mut framing = Framing::default();
        let mut out = Vec::new();
        for part in parts {
            framing.feed(part, &mut out);
        }
        (out, framing.is_refused())
    }

    fn long_get(uri_bytes: usize) -> Vec<u8> {
        format!(
            "GET /{} HTTP/1.1\r\nhost: x\r\n\r\n",
            "a".repeat(uri_bytes - 1)
        )
        .into_bytes()
    }

    #[test]
    fn ordinary_requests_pass_untouched_in_any_pieces() {
        let stream = b"GET /a HTTP/1.1\r\nhost: x\r\n\r\n\
            POST /b HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello\
            POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nt: 1\r\n\r\n\
            GET /d HTTP/1.1\r\n\r\n";
        for size in [1, 2, 7, stream.len()] {
            let parts: Vec<&[u8]> = stream.chunks(size).collect();
            assert_eq!(pass(&parts), (stream.to_vec(), false), "pieces of {size}");
        }
    }

    #[test]
    fn a_uri_hyper_accepts_passes_and_one_byte_more_is_refused() {
        let (out, refused) = pass(&[&long_get(MAX_URI_BYTES)]);
        assert!(!refused);
        assert_eq!(out, long_get(MAX_URI_BYTES));
        let (out, refused) = pass(&[&long_get(MAX_URI_BYTES + 1)]);
        assert!(refused);
        assert!(out.is_empty(), "hyper sees nothing of the refused request");
    }

    #[test]
    fn a_long_uri_after_earlier_requests_is_refused_and_the_earlier_ones_pass() {
        let first = b"POST /b HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc".to_vec();
        let stream = [first.clone(), long_get(100_000)].concat();
        let mut framing = Framing::default();
        let mut out = Vec::new();
        for part in stream.chunks(READ_CHUNK) {
            framing.feed(part, &mut out);
        }
        assert_eq!(out, first);
        assert!(
            framing.refused_and_drained(),
            "the rest of the head was read"
        );
    }

    #[test]
    fn a_body_with_a_long_line_is_never_taken_for_a_request_line() {
        let body = vec![b'x'; 200_000];
        let fixed = [
            format!("POST /u HTTP/1.1\r\ncontent-length: {}\r\n\r\n", body.len()).into_bytes(),
            body.clone(),
        ]
        .concat();
        assert_eq!(pass(&[&fixed]), (fixed.clone(), false));
        let chunked = [
            b"POST /u HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n".to_vec(),
            format!("{:x}\r\n", body.len()).into_bytes(),
            body,
            b"\r\n0\r\n\r\n".to_vec(),
        ]
        .concat();
        assert_eq!(pass(&[&chunked]), (chunked.clone(), false));
    }

    #[test]
    fn framing_the_guard_cannot_be_sure_of_turns_it_off() {
        for head in [
            &b"POST /u HTTP/1.1\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\n"[..],
            b"POST /u HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n",
            b"POST /u HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n",
            b"GET /u HTTP/1.1\r\nupgrade: websocket\r\n\r\n",
            b"CONNECT example.com:443 HTTP/1.1\r\n\r\n",
            b"GET /u HTTP/1.1\r\nx: a\r\n folded\r\n\r\n",
        ] {
            let stream = [head.to_vec(), long_get(100_000)].concat();
            let (out, refused) = pass(&[&stream]);
            assert!(!refused, "{}", String::from_utf8_lossy(head));
            assert_eq!(out, stream, "everything goes to hyper, which decides");
        }
    }

    #[test]
    fn a_request_line_cut_short_by_the_client_reaches_hyper_as_it_is() {
        let mut framing = Framing::default();
        let mut out = Vec::new();
        framing.feed(b"GET /abc", &mut out);
        assert!(out.is_empty());
        framing.release_held(&mut out);
        assert_eq!(out, b"GET /abc");
    }

    /// `serve_router` on a small router: its address, the switch that stops it, and its task.
    async fn serve_small_router() -> (
        SocketAddr,
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<io::Result<()>>,
    ) {
        use axum::routing::{get, post};
        let router = axum::Router::new()
            .route("/ok", get(|| async { "ok" }))
            .route("/echo", post(|body: String| async move { body }));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(crate::serve::serve_router(listener, router, async move {
            let _ = stopped.await;
        }));
        (addr, stop, server)
    }

    /// Sends `request` on `stream` and reads one answer: its status, headers and body. (By
    /// hand: HTTP clients refuse to send a URI this long at all.)
    async fn exchange(stream: &mut TcpStream, request: &[u8]) -> (u16, String, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        stream.write_all(request).await.unwrap();
        let mut received = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&received).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .unwrap()
                    .parse()
                    .unwrap();
                if body.len() >= length {
                    let status = head[9..12].parse().unwrap();
                    return (status, head.to_string(), body[..length].to_string());
                }
            }
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "connection closed before a whole answer: {text:?}");
            received.extend_from_slice(&chunk[..n]);
        }
    }

    fn get(path: &str) -> Vec<u8> {
        format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").into_bytes()
    }

    #[tokio::test]
    async fn through_hyper_a_uri_too_long_gets_the_json_414_on_new_and_reused_connections() {
        let (addr, stop, server) = serve_small_router().await;
        let long = get(&format!("/{}", "a".repeat(100_000)));
        let mut fresh = TcpStream::connect(addr).await.unwrap();
        let (status, head, body) = exchange(&mut fresh, &long).await;
        assert_eq!(status, 414, "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"], "uri_too_long", "{body}");

        // A connection that has served requests (one with a body) first.
        let mut used = TcpStream::connect(addr).await.unwrap();
        let echo = b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhello";
        assert_eq!(exchange(&mut used, echo).await.2, "hello");
        assert_eq!(exchange(&mut used, &get("/ok")).await.0, 200);
        assert_eq!(exchange(&mut used, &long).await.0, 414);
        // The server carries on.
        assert_eq!(
            exchange(&mut fresh_connection(addr).await, &get("/ok"))
                .await
                .0,
            200
        );

        // A URI of exactly hyper's limit still reaches the router (a 404 there, not a 414).
        let longest = get(&format!("/{}", "a".repeat(MAX_URI_BYTES - 1)));
        assert_eq!(
            exchange(&mut fresh_connection(addr).await, &longest)
                .await
                .0,
            404
        );

        // Graceful shutdown still ends the server.
        stop.send(()).unwrap();
        let ended = tokio::time::timeout(std::time::Duration::from_secs(10), server).await;
        assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
    }

    async fn fresh_connection(addr: SocketAddr) -> TcpStream {
        TcpStream::connect(addr).await.unwrap()
    }

    #[test]
    fn the_answer_is_a_414_with_the_error_body() {
        let answer = String::from_utf8(too_long_answer()).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"], "uri_too_long");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}
