//! A TCP proxy for faults at exact byte counts: it forwards connections to an upstream and,
//! when a direction has carried the armed number of bytes, cuts the connection that carried
//! them: a reset, a clean close, or silence (the client's socket held open and nothing
//! forwarded any more: a half-open connection, as a dead peer or a blackholing middlebox
//! leaves it).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Which way bytes flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Client to server (requests).
    Up,
    /// Server to client (responses).
    Down,
}

/// What a cut does to the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutMode {
    /// Both sockets closed with a TCP reset.
    Reset,
    /// Both sockets shut down cleanly (FIN).
    Close,
    /// Nothing forwarded any more; the server's socket closed, the client's held open
    /// without a FIN or RST (half-open, as a peer that vanished leaves it).
    Silence,
}

#[derive(Debug, Clone, Copy)]
struct Cut {
    dir: Dir,
    after: u64,
    mode: CutMode,
}

#[derive(Debug, Default)]
struct Shared {
    cuts: Mutex<VecDeque<Cut>>,
    /// Bytes carried in each direction since the proxy started or the last cut fired.
    since_cut: [AtomicU64; 2],
    total: [AtomicU64; 2],
    fired: AtomicU64,
    connections: AtomicU64,
    /// New connections are accepted and then never served.
    blackhole: AtomicBool,
}

/// A running proxy; stops accepting when dropped.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

fn idx(dir: Dir) -> usize {
    match dir {
        Dir::Up => 0,
        Dir::Down => 1,
    }
}

impl Proxy {
    /// A proxy listening on `listen` (port 0 picks one) in front of `upstream`.
    pub async fn start(listen: SocketAddr, upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind(listen).await.expect("bind the proxy");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let accept = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((client, _)) = listener.accept().await {
                s.connections.fetch_add(1, Ordering::SeqCst);
                if s.blackhole.load(Ordering::SeqCst) {
                    held.push(client);
                    continue;
                }
                let s = s.clone();
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        serve(client, server, s).await;
                    }
                });
            }
        });
        Proxy {
            addr,
            shared,
            accept,
        }
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Arms a cut: once `after` more bytes have flowed in `dir` (counted from the previous
    /// cut, or from now when none is pending), the connection carrying them gets `mode`.
    /// Cuts fire in the order armed.
    pub fn cut_after(&self, dir: Dir, after: u64, mode: CutMode) {
        let mut cuts = self.shared.cuts.lock().unwrap();
        if cuts.is_empty() {
            // The first cut armed counts from now.
            self.shared.since_cut[0].store(0, Ordering::SeqCst);
            self.shared.since_cut[1].store(0, Ordering::SeqCst);
        }
        cuts.push_back(Cut { dir, after, mode });
    }

    /// From now on, new connections are accepted and never answered (existing ones go on).
    pub fn blackhole_new_connections(&self, on: bool) {
        self.shared.blackhole.store(on, Ordering::SeqCst);
    }

    /// How many cuts have fired.
    pub fn cuts_fired(&self) -> u64 {
        self.shared.fired.load(Ordering::SeqCst)
    }

    /// Cuts still armed.
    pub fn cuts_pending(&self) -> usize {
        self.shared.cuts.lock().unwrap().len()
    }

    /// Bytes forwarded in `dir` since the start.
    pub fn bytes(&self, dir: Dir) -> u64 {
        self.shared.total[idx(dir)].load(Ordering::SeqCst)
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }
}

impl Shared {
    /// How many of `n` bytes in `dir` may pass before the next cut, and the cut if it falls
    /// within them (it then fires: the counters restart from it).
    fn take(&self, dir: Dir, n: u64) -> (u64, Option<CutMode>) {
        let mut cuts = self.cuts.lock().unwrap();
        let i = idx(dir);
        let since = self.since_cut[i].load(Ordering::SeqCst);
        if let Some(c) = cuts.front().copied()
            && c.dir == dir
            && since + n >= c.after
        {
            cuts.pop_front();
            let pass = c.after.saturating_sub(since);
            self.since_cut[0].store(0, Ordering::SeqCst);
            self.since_cut[1].store(0, Ordering::SeqCst);
            self.total[i].fetch_add(pass, Ordering::SeqCst);
            self.fired.fetch_add(1, Ordering::SeqCst);
            return (pass, Some(c.mode));
        }
        self.since_cut[i].fetch_add(n, Ordering::SeqCst);
        self.total[i].fetch_add(n, Ordering::SeqCst);
        (n, None)
    }
}

/// What a connection's pumps are told: go on, or stop as a cut says.
type Signal = Option<CutMode>;

async fn serve(client: TcpStream, server: TcpStream, shared: Arc<Shared>) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (tx, rx) = watch::channel::<Signal>(None);
    let (cr, cw) = client.into_split();
    let (sr, sw) = server.into_split();
    let up = tokio::spawn(pump(
        cr,
        sw,
        Dir::Up,
        shared.clone(),
        tx.clone(),
        rx.clone(),
    ));
    let down = tokio::spawn(pump(sr, cw, Dir::Down, shared, tx, rx.clone()));
    let (a, b) = (up.await, down.await);
    // The halves come back so that the sockets are closed as the cut says.
    let (Ok((cr, sw)), Ok((sr, cw))) = (a, b) else {
        return;
    };
    let mode = *rx.borrow();
    match mode {
        Some(CutMode::Silence) => {
            // The server side goes (a peer that vanished); the client's socket is held
            // open, unread and unanswered, until the runtime ends.
            drop((sr, sw));
            std::future::pending::<()>().await;
            drop((cr, cw));
        }
        Some(CutMode::Reset) => {
            let client = cr.reunite(cw).ok();
            let server = sr.reunite(sw).ok();
            for s in [client, server].into_iter().flatten() {
                // Linger 0: close sends RST instead of FIN.
                let _ = s.set_zero_linger();
                drop(s);
            }
        }
        Some(CutMode::Close) | None => {
            let (mut cw, mut sw) = (cw, sw);
            let _ = cw.shutdown().await;
            let _ = sw.shutdown().await;
            drop((cr, sr));
        }
    }
}

/// Copies `from` to `to` until either side ends or a cut fires, and returns the halves.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    dir: Dir,
    shared: Arc<Shared>,
    tx: watch::Sender<Signal>,
    mut rx: watch::Receiver<Signal>,
) -> (
    tokio::net::tcp::OwnedReadHalf,
    tokio::net::tcp::OwnedWriteHalf,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = tokio::select! {
            r = from.read(&mut buf) => match r {
                Ok(0) | Err(_) => {
                    // One side ended: end the other direction too.
                    let _ = tx.send(Some(CutMode::Close));
                    return (from, to);
                }
                Ok(n) => n,
            },
            _ = rx.changed() => return (from, to),
        };
        let (pass, cut) = shared.take(dir, n as u64);
        if pass > 0 && to.write_all(&buf[..pass as usize]).await.is_err() {
            let _ = tx.send(Some(CutMode::Close));
            return (from, to);
        }
        if let Some(mode) = cut {
            let _ = tx.send(Some(mode));
            return (from, to);
        }
    }
}
