//! A network test bed: two network namespaces joined by a veth pair, `tc netem` on both
//! ends (delay, rate, loss, and a cut that drops every packet; where the kernel has no
//! netem, `tbf` for rates and cuts), bigq-emulator serving inside
//! one namespace and the client running inside the other, and everything removed on drop
//! (also when a test panics). [`proxy`] is a TCP proxy for cuts at exact byte counts, which
//! needs no namespace and runs on loopback too.
//!
//! The bed needs root and `ip netns`; [`Bed::new`] says why it cannot be had, and the tests
//! that need it skip with that message.
#![allow(dead_code)]

pub mod proxy;
pub mod storm;

use std::fs::File;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use bigq_emulator::Emulator;
use bigq_emulator::Faults;

/// Namespaces of beds are named `bqnb-<pid>-<n>-{srv,cli}`, so that a bed left behind by a
/// killed test process can be recognised and removed.
const PREFIX: &str = "bqnb-";

/// The server's address on the veth link (each bed is its own pair of namespaces, so every
/// bed can use the same addresses).
pub const SERVER_IP: Ipv4Addr = Ipv4Addr::new(10, 231, 0, 1);
/// The client's address on the veth link.
pub const CLIENT_IP: Ipv4Addr = Ipv4Addr::new(10, 231, 0, 2);

/// The shape of the link, applied to both directions (each end's egress): a round trip
/// takes `2 * one_way_delay` plus serialisation at `rate`.
#[derive(Debug, Clone, Default)]
pub struct Link {
    /// Delay added to every packet in each direction.
    pub one_way_delay: Duration,
    /// Rate limit in bits per second in each direction (`None`: unlimited).
    pub rate_bits: Option<u64>,
    /// Share of packets dropped in each direction, in percent.
    pub loss_percent: f64,
}

impl Link {
    /// A link of `rtt` round trip at `rate_bits` bits per second.
    pub fn rtt(rtt: Duration, rate_bits: u64) -> Link {
        Link {
            one_way_delay: rtt / 2,
            rate_bits: Some(rate_bits),
            loss_percent: 0.0,
        }
    }

    /// The qdisc for this link when the kernel has no netem: tbf gives the rate, and
    /// nothing here can give delay or loss.
    fn tbf_args(&self) -> Result<Vec<String>, String> {
        if !self.one_way_delay.is_zero() || self.loss_percent > 0.0 {
            return Err(format!(
                "this kernel has no netem (sch_netem): delay and loss cannot be applied ({self:?})"
            ));
        }
        Ok(match self.rate_bits {
            Some(rate) => vec![
                "tbf".into(),
                "rate".into(),
                format!("{rate}bit"),
                "burst".into(),
                "256kb".into(),
                "latency".into(),
                "100ms".into(),
            ],
            // No shaping: the default queue.
            None => vec!["pfifo".into(), "limit".into(), "10000".into()],
        })
    }

    fn netem_args(&self) -> Vec<String> {
        let mut args = vec!["netem".to_string()];
        if !self.one_way_delay.is_zero() {
            args.push("delay".into());
            args.push(format!("{}us", self.one_way_delay.as_micros()));
        }
        if let Some(rate) = self.rate_bits {
            args.push("rate".into());
            args.push(format!("{rate}bit"));
            // netem's default queue (1000 packets) is too short for a delayed fast link,
            // where it would drop what a real router would buffer.
            args.push("limit".into());
            args.push("100000".into());
        }
        if self.loss_percent > 0.0 {
            args.push("loss".into());
            args.push(format!("{}%", self.loss_percent));
        }
        args
    }
}

/// Two namespaces joined by veth; removed on drop. Derefs to its [`Control`].
#[derive(Debug)]
pub struct Bed {
    ctl: Control,
}

/// Shapes or cuts a bed's link; cheap to clone and usable from any thread (`tc` reaches the
/// namespaces by name), so a client inside the bed can cut its own link mid-call.
#[derive(Debug, Clone)]
pub struct Control {
    /// Whether the kernel has netem (delay, loss); without it only rates and cuts work.
    netem: bool,
    server_ns: String,
    client_ns: String,
    server_if: String,
    client_if: String,
}

impl std::ops::Deref for Bed {
    type Target = Control;
    fn deref(&self) -> &Control {
        &self.ctl
    }
}

/// Runs `cmd args...`, failing with its stderr.
fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Removes the namespaces of beds whose process is gone (a test killed before its drop ran).
fn sweep_stale() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = run("ip", &["netns", "del", name]);
        }
    }
}

impl Bed {
    /// A new bed, or why this machine cannot have one (not root, no `ip netns`, no netem).
    pub fn new() -> Result<Bed, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("the network test bed needs root (network namespaces)".into());
        }
        run("ip", &["netns", "list"])
            .map_err(|e| format!("`ip netns` is unavailable ({e}); install iproute2"))?;
        sweep_stale();
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let mut bed = Bed {
            ctl: Control {
                netem: true,
                server_ns: format!("{PREFIX}{pid}-{n}-srv"),
                client_ns: format!("{PREFIX}{pid}-{n}-cli"),
                // Interface names are at most 15 bytes.
                server_if: format!("nb{pid:x}x{n}s"),
                client_if: format!("nb{pid:x}x{n}c"),
            },
        };
        // From here on, drop removes whatever was made.
        bed.set_up()?;
        Ok(bed)
    }

    fn set_up(&mut self) -> Result<(), String> {
        let (s, c) = (&self.server_ns, &self.client_ns);
        run("ip", &["netns", "add", s])?;
        run("ip", &["netns", "add", c])?;
        run(
            "ip",
            &[
                "link",
                "add",
                &self.server_if,
                "netns",
                s,
                "type",
                "veth",
                "peer",
                "name",
                &self.client_if,
                "netns",
                c,
            ],
        )?;
        for (ns, dev, ip) in [
            (s, &self.server_if, SERVER_IP),
            (c, &self.client_if, CLIENT_IP),
        ] {
            run("ip", &["-n", ns, "link", "set", "lo", "up"])?;
            run(
                "ip",
                &["-n", ns, "addr", "add", &format!("{ip}/30"), "dev", dev],
            )?;
            run("ip", &["-n", ns, "link", "set", dev, "up"])?;
        }
        // netem gives delay, loss and rate; where the kernel lacks it, tbf still gives rates
        // and cuts, and the tests that need delay or loss say that they cannot have it.
        if self.shape(&Link::default()).is_err() {
            self.ctl.netem = false;
            self.shape(&Link::default())
                .map_err(|e| format!("tc cannot shape the link ({e})"))?;
        }
        Ok(())
    }

    /// A handle that shapes and cuts this bed's link.
    pub fn control(&self) -> Control {
        self.ctl.clone()
    }

    /// Runs `f` on a thread inside the client namespace, on a runtime of its own (whose
    /// threads are all in that namespace: sockets belong to the namespace of the thread that
    /// opens them), and returns what it returns; a panic inside is a panic here.
    pub fn client<F, Fut, T>(&self, f: F) -> T
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = T>,
        T: Send + 'static,
    {
        in_namespace(&self.client_ns, f)
    }

    /// Starts bigq-emulator inside the server namespace on [`SERVER_IP`] with an empty
    /// dataset `ds`, and runs `setup` on it (to seed tables) before returning.
    pub fn emulator(
        &self,
        setup: impl FnOnce(&Emulator) + Send + 'static,
    ) -> Result<NetnsEmulator, String> {
        NetnsEmulator::start(&self.server_ns, IpAddr::V4(SERVER_IP), setup)
    }

    /// Starts a server inside the server namespace: `serve` runs there on a runtime of its own
    /// until the returned guard is dropped.
    pub fn server<F, Fut>(&self, serve: F) -> ServerThread
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        ServerThread::start(&self.server_ns, serve)
    }
}

impl Control {
    /// Applies `link` to both ends (replacing what was there).
    pub fn shape(&self, link: &Link) -> Result<(), String> {
        let args = if self.netem {
            link.netem_args()
        } else {
            link.tbf_args()?
        };
        for (ns, dev) in [
            (&self.server_ns, &self.server_if),
            (&self.client_ns, &self.client_if),
        ] {
            let mut a: Vec<&str> = vec!["-n", ns, "qdisc", "replace", "dev", dev, "root"];
            a.extend(args.iter().map(String::as_str));
            run("tc", &a)?;
        }
        Ok(())
    }

    /// Cuts the link: every packet in both directions is dropped (a blackhole; connections
    /// stay open on both sides, as when a router on the path dies).
    pub fn cut(&self) -> Result<(), String> {
        if self.netem {
            return self.shape(&Link {
                loss_percent: 100.0,
                ..Link::default()
            });
        }
        // A token bucket of one byte passes no packet, and drops them silently.
        for (ns, dev) in [
            (&self.server_ns, &self.server_if),
            (&self.client_ns, &self.client_if),
        ] {
            run(
                "tc",
                &[
                    "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", "8bit",
                    "burst", "1", "limit", "1",
                ],
            )?;
        }
        Ok(())
    }

    /// Whether delay and loss can be applied (the kernel has netem).
    pub fn has_netem(&self) -> bool {
        self.netem
    }

    /// The server namespace's name (for `ip netns exec`).
    pub fn server_ns(&self) -> &str {
        &self.server_ns
    }

    /// The client namespace's name.
    pub fn client_ns(&self) -> &str {
        &self.client_ns
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end inside it, and with it the pair.
        let _ = run("ip", &["netns", "del", &self.server_ns]);
        let _ = run("ip", &["netns", "del", &self.client_ns]);
    }
}

/// Moves the calling thread into the named network namespace.
fn enter(ns: &str) -> std::io::Result<()> {
    let f = File::open(format!("/var/run/netns/{ns}"))?;
    // SAFETY: the descriptor is open for the call; setns only changes this thread's
    // namespace.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn in_namespace<F, Fut, T>(ns: &str, f: F) -> T
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    let ns = ns.to_string();
    let t = std::thread::spawn(move || {
        enter(&ns).unwrap_or_else(|e| panic!("enter network namespace {ns}: {e}"));
        // Threads the runtime starts inherit this thread's namespace.
        runtime().block_on(f())
    });
    match t.join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// A future running on a thread of its own inside a namespace, stopped on drop.
pub struct ServerThread {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ServerThread {
    fn start<F, Fut>(ns: &str, serve: F) -> ServerThread
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let ns = ns.to_string();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            enter(&ns).unwrap_or_else(|e| panic!("enter network namespace {ns}: {e}"));
            runtime().block_on(async move {
                tokio::select! {
                    _ = serve() => {}
                    _ = stopped => {}
                }
            });
        });
        ServerThread {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for ServerThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// bigq-emulator running inside a namespace, stopped on drop.
pub struct NetnsEmulator {
    /// The REST endpoint, `http://10.231.0.1:PORT`.
    pub rest: String,
    /// The Storage (gRPC) endpoint.
    pub grpc: String,
    /// The gRPC address.
    pub grpc_addr: SocketAddr,
    /// The project.
    pub project: String,
    /// The emulator's fault hooks.
    pub faults: Arc<Faults>,
    _thread: ServerThread,
}

impl NetnsEmulator {
    fn start(
        ns: &str,
        host: IpAddr,
        setup: impl FnOnce(&Emulator) + Send + 'static,
    ) -> Result<NetnsEmulator, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = ServerThread::start(ns, move || async move {
            let emu = match Emulator::builder()
                .with_host(host)
                .with_project("test-project")
                .start()
                .await
            {
                Ok(emu) => emu,
                Err(e) => {
                    let _ = tx.send(Err(format!("start bigq-emulator on {host}: {e}")));
                    return;
                }
            };
            // The dataset every test uses, made here so that `setup` can seed tables.
            let made = async {
                bigq::Client::builder()
                    .with_project(emu.project())
                    .with_emulator(emu.rest_endpoint())
                    .build()
                    .await?
                    .create_dataset(bigq::admin::Dataset::new("ds"))
                    .await
            };
            if let Err(e) = made.await {
                let _ = tx.send(Err(format!("create dataset ds: {e}")));
                return;
            }
            setup(&emu);
            let _ = tx.send(Ok((
                emu.rest_endpoint(),
                emu.grpc_endpoint(),
                emu.grpc_addr(),
                emu.project().to_string(),
                emu.faults().clone(),
            )));
            // Serve until the thread is told to stop.
            std::future::pending::<()>().await;
            drop(emu);
        });
        let (rest, grpc, grpc_addr, project, faults) =
            rx.recv_timeout(Duration::from_secs(60))
                .map_err(|e| format!("bigq-emulator did not start in its namespace: {e}"))??;
        Ok(NetnsEmulator {
            rest,
            grpc,
            grpc_addr,
            project,
            faults,
            _thread: thread,
        })
    }
}

/// The bed, or `None` after printing why the calling test skips.
pub fn bed_or_skip(test: &str) -> Option<Bed> {
    match Bed::new() {
        Ok(bed) => Some(bed),
        Err(why) => {
            eprintln!("{test}: skipped: {why}");
            None
        }
    }
}
