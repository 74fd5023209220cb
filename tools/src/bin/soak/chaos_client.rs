//! The chaos client: connections that misbehave in every way the server
//! must survive.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rcss3d::net::client::{frame, AgentClient};
use tokio::sync::Semaphore;

use crate::wire::recv;
use crate::NAO;

pub(crate) const CHAOS_KINDS: [&str; 9] = [
    "connect_drop",
    "scene_drop",
    "malformed",
    "huge_prefix",
    "half_frame",
    "say_flood",
    "non_reader",
    "big_frame",
    "garbage_stream",
];

#[derive(Default)]
pub(crate) struct ChaosStats {
    pub(crate) done: [AtomicU64; 9],
    /// Connections the server closed on us (huge prefix, limits).
    pub(crate) closed_by_server: AtomicU64,
    /// Connections that could not even be made.
    pub(crate) connect_failed: AtomicU64,
}

pub(crate) const MALFORMED: [&[u8]; 14] = [
    b"(he1 1.0))(he2 (((",
    b"((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((syn",
    b")",
    b"(\"unterminated",
    b"(scene rsg/agent/nao/nao_hetero.rsg 9)",
    b"(scene /etc/passwd)",
    b"(init (unum 99)(teamname ../../x))",
    b"(beam nan inf -inf)",
    b"(he1 nan)(lle7 1e400)(rle3 -inf)",
    b"(say)(say (a b))(say \"\")",
    b"\x00\x00\x00\xff(syn)",
    b"\xff\xfe\xfd(syn\xc3\x28)",
    b"(frobnicate 1)(pass)(syn syn syn)",
    b"; comment only",
];

pub(crate) async fn chaos_action(
    kind: usize,
    addr: SocketAddr,
    rng: &mut ChaCha8Rng,
    stats: &ChaosStats,
) -> std::io::Result<()> {
    let mut s = match AgentClient::connect(addr).await {
        Ok(s) => s,
        Err(e) => {
            stats.connect_failed.fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
    };
    match CHAOS_KINDS[kind] {
        "connect_drop" => {}
        "scene_drop" => {
            s.send(&format!("(scene {NAO} {})", rng.gen_range(0..5)))
                .await?;
            for _ in 0..rng.gen_range(0..4) {
                let _ = tokio::time::timeout(Duration::from_secs(1), recv(&mut s)).await;
            }
        }
        "malformed" => {
            for _ in 0..rng.gen_range(1..20) {
                let m = MALFORMED[rng.gen_range(0..MALFORMED.len())];
                s.send_bytes(m).await?;
            }
            let junk: Vec<u8> = (0..rng.gen_range(1..200)).map(|_| rng.gen()).collect();
            s.send_bytes(&junk).await?;
            let _ = tokio::time::timeout(Duration::from_millis(300), recv(&mut s)).await;
        }
        "huge_prefix" => {
            // Written by hand: a prefix announcing 16 MiB to 4 GiB, over
            // the server's limit, and a payload that never follows.
            let len: u32 = rng.gen_range(0x0100_0000..=u32::MAX);
            s.send_raw(&len.to_be_bytes()).await?;
            s.send_raw(b"(say ").await?;
            // The server must close this connection, promptly.
            if s.closed_within(Duration::from_secs(3)).await {
                stats.closed_by_server.fetch_add(1, Ordering::Relaxed);
            }
        }
        "half_frame" => {
            s.send("(syn)").await?;
            // Written by hand: a prefix announcing 1000 bytes, then 13.
            s.send_raw(&1000u32.to_be_bytes()).await?;
            s.send_raw(b"(he1 1.0)(he2").await?;
            tokio::time::sleep(Duration::from_millis(rng.gen_range(100..2000))).await;
        }
        "say_flood" => {
            s.send(&format!("(scene {NAO} 0)")).await?;
            let n = rng.gen_range(200..2000);
            let mut burst = Vec::new();
            for i in 0..n {
                burst.extend_from_slice(&frame(format!("(say flood{i})(syn)").as_bytes()));
                if burst.len() > 16 * 1024 {
                    s.send_raw(&burst).await?;
                    burst.clear();
                }
            }
            s.send_raw(&burst).await?;
        }
        "non_reader" => {
            s.send(&format!("(scene {NAO} 1)")).await?;
            tokio::time::sleep(Duration::from_millis(rng.gen_range(1000..6000))).await;
        }
        "big_frame" => {
            // Just under the default 16 KiB limit: one long say.
            let n = rng.gen_range(1_000..16_000);
            let mut m = b"(say ".to_vec();
            m.extend(std::iter::repeat_n(b'a', n));
            m.push(b')');
            s.send_bytes(&m).await?;
            let _ = tokio::time::timeout(Duration::from_millis(300), recv(&mut s)).await;
        }
        "garbage_stream" => {
            let junk: Vec<u8> = (0..rng.gen_range(1..4096)).map(|_| rng.gen()).collect();
            s.send_raw(&junk).await?;
            let _ = tokio::time::timeout(Duration::from_millis(300), recv(&mut s)).await;
        }
        _ => {}
    }
    stats.done[kind].fetch_add(1, Ordering::Relaxed);
    Ok(())
}

pub(crate) async fn chaos(
    addr: SocketAddr,
    seed: u64,
    concurrency: usize,
    until: Instant,
    stats: Arc<ChaosStats>,
) {
    let sem = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut i = 0usize;
    while Instant::now() < until {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        let kind = i % CHAOS_KINDS.len();
        i += 1;
        let mut task_rng = ChaCha8Rng::seed_from_u64(rng.gen());
        let stats = stats.clone();
        tokio::spawn(async move {
            let _ = chaos_action(kind, addr, &mut task_rng, &stats).await;
            drop(permit);
        });
        tokio::time::sleep(Duration::from_millis(rng.gen_range(5..60))).await;
    }
    // Let the last actions finish.
    let _ = sem.acquire_many(concurrency.max(1) as u32).await;
}
