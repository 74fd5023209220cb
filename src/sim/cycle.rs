//! One simulation cycle (agent-protocol.md §4.1) and the per-agent state.
//!
//! [`Simulation`] owns the world, the referee, the team registry, the one
//! seeded RNG and every agent's protocol state. It does no I/O and reads no
//! clock: the driver feeds it the inputs of the read phase
//! ([`Simulation::connect`], [`Simulation::receive`], ...), takes the
//! frames of the send phase ([`Simulation::take_outgoing`]) and calls
//! [`Simulation::step`] for the physics step and the prepare phase.
//! Everything is processed in a fixed order (agents by connection id) so a
//! sync-mode run is reproducible from its seed and its agents' messages.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use nalgebra::Vector3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tracing::{debug, info, warn};

use crate::command::{Beam, Command, DecodeError, Init, Scene};
use crate::config::Config;
use crate::monitor::command::{MonitorCommand, RobotRef, Selection};
use crate::net::framing;
use crate::net::log_limit::LogLimit;
use crate::perception::accelerometer::Accelerometer;
use crate::perception::game_state::{self, GameState};
use crate::perception::hear::{self, HearBudget};
use crate::perception::vision::{self, SeenRobot, VisionInput};
use crate::perception::{foot_force, gyro, hinge_joint, time};
use crate::rules::facts::{Decision, RobotContact, RobotFacts, WorldFacts};
use crate::rules::teams::{CompositionRules, TeamRegistry};
use crate::rules::{Referee, Side};
use crate::sexp::ParseError;
use crate::sim::model::{ModelLibrary, PerceptorSlot, RobotModel};
use crate::sim::scene::SceneError;
use crate::sim::snapshot::{FoulRecord, GameSnapshot, PartPose, RobotSnapshot, WorldSnapshot};
use crate::sim::world::{RobotHandle, World};

/// Identifies one agent connection for the life of the server.
pub type ConnId = u64;

/// Smallest distance between two robots' torsos a beam may leave (m).
const MIN_ROBOT_SPACING: f32 = 0.45;

/// Robots built per cycle at most once the match has started; further
/// `scene` requests wait their turn (a whole team that connects at once is
/// built in a few cycles).
const MAX_NEW_ROBOTS_PER_CYCLE: usize = 2;

/// Bad-input log lines per agent before they are thinned out to one per
/// second of server time.
const LOUD_ERRORS: u32 = 20;

/// The robot body parts vision reports, in `P` order.
const VISIBLE_PARTS: [&str; 5] = vision::PART_NAMES;

/// Messages an agent heard during the read phase, reported in the next
/// frame (self copy, teammate, opponent).
#[derive(Debug, Default, Clone)]
struct Heard {
    own_copy: Option<String>,
    team: Option<(Arc<str>, f32, String)>,
    opponent: Option<(Arc<str>, f32, String)>,
}

/// One agent connection's protocol state.
#[derive(Debug)]
struct Agent {
    peer: SocketAddr,
    robot: Option<RobotHandle>,
    model: Option<Arc<RobotModel>>,
    side: Option<Side>,
    team: Option<Arc<str>>,
    unum: u8,
    /// The next GS carries `(unum n) (team side)` (once per connection).
    announce_identity: bool,
    /// Perception builds since the connection was accepted (vision phase).
    counter: u64,
    /// Frames actually handed to the connection.
    frames_sent: u64,
    /// `(syn)` received since the last prepare phase.
    synced: bool,
    /// Any message received since the last prepare phase (grace period).
    got_message: bool,
    /// The agent has answered a frame with `(syn)`: its grace period is
    /// over, every later frame waits for its answer.
    in_lockstep: bool,
    /// `frames_sent` when the agent joined its team (the next frame is the
    /// first whose GS names its number).
    joined_at_frame: Option<u64>,
    /// The connection has gone; the robot leaves in the next step.
    closing: bool,
    /// A scene request that failed or was refused; excluded from the sync
    /// barrier (deviation from the reference, which deadlocks).
    scene_failed: bool,
    pending_scene: Option<Scene>,
    pending_init: Option<Init>,
    pending_beam: Option<Beam>,
    /// Frame built in the prepare phase, sent in the next send phase.
    outgoing: Option<Bytes>,
    heard: Heard,
    budget: HearBudget,
    /// Vision calibration offset, drawn once per robot.
    calibration: Vector3<f32>,
    /// This agent's noise stream, seeded from the server RNG at connect,
    /// so frames can be built in any order (or in parallel) reproducibly.
    rng: ChaCha8Rng,
    /// The ACC perceptor's state.
    accelerometer: Accelerometer,
    /// Torso position after the last step that left the robot finite.
    last_sane: Option<Vector3<f32>>,
    /// Bad-input events seen.
    errors: u64,
    /// Thins this agent's bad-input lines.
    error_log: LogLimit,
}

impl Agent {
    fn label(&self) -> String {
        match (&self.team, self.side) {
            (Some(t), Some(_)) => format!("{t} {}", self.unum),
            _ => String::new(),
        }
    }

    /// Whether the sync barrier must wait for this agent.
    fn in_barrier(&self) -> bool {
        !self.closing
            && !self.scene_failed
            && (self.robot.is_some() || self.pending_scene.is_some())
    }
}

/// A robot vision can see, copied out of the agent table for one cycle.
struct VisibleRobot {
    conn: ConnId,
    side: Side,
    team: Arc<str>,
    unum: u8,
    parts: [Option<Vector3<f32>>; 5],
}

/// What a connection's handler is told about its agent: the team and
/// number for its log span, and what its join deadline needs to know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AgentStatus {
    /// Connected, not in a team yet.
    #[default]
    Connecting,
    /// The `scene` was refused: no robot (a later `scene` may succeed).
    SceneRefused,
    /// In a team.
    Joined {
        /// Team name.
        team: String,
        /// Uniform number.
        unum: u8,
    },
}

/// What a cycle asks the driver to do besides sending frames.
#[derive(Debug, Default)]
pub struct StepReport {
    /// Connections to close (robot killed by the trainer).
    pub close: Vec<ConnId>,
    /// News for connection handlers: agents that joined a team or whose
    /// scene was refused in this step.
    pub status: Vec<(ConnId, AgentStatus)>,
    /// The referee or a monitor asked the server to stop.
    pub quit: bool,
    /// Where this cycle's time went.
    pub stages: StageTimes,
}

/// Wall time of the stages of one step, microseconds.
#[derive(Debug, Default, Clone, Copy)]
pub struct StageTimes {
    /// Scene/init/beam, rapier step, blow-up guard, accelerometers.
    pub physics_us: u64,
    /// The referee and the clocks.
    pub referee_us: u64,
    /// Building every agent's frame (vision included).
    pub perception_us: u64,
}

/// The whole simulated match.
pub struct Simulation {
    cfg: Arc<Config>,
    world: World,
    models: ModelLibrary,
    referee: Referee,
    teams: TeamRegistry,
    agents: BTreeMap<ConnId, Agent>,
    rng: ChaCha8Rng,
    seed: u64,
    server_time: f32,
    cycle: u64,
    structure_version: u64,
    spawned: u32,
    /// `say` messages of this read phase, resolved in connection order.
    says: Vec<(ConnId, String)>,
    /// Monitor selection (`select`).
    selected: Option<ConnId>,
    report: StepReport,
    /// Whether a cycle has run with agents (for `sync_wait_for_agents`).
    started: bool,
    /// Thins the lines of robots built or refused and of robots that leave
    /// without having joined a team (one per connection otherwise).
    robot_log: LogLimit,
    /// Thins the bad-input lines of agents without a team, together.
    teamless_log: LogLimit,
    /// Reused frame buffer.
    text: String,
}

/// Why the simulation could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A model or scene file is missing or invalid.
    #[error(transparent)]
    Scene(#[from] SceneError),
}

impl Simulation {
    /// Builds the world and loads the robot models. `seed` must already be
    /// resolved (0 = random is decided by the caller, who prints it).
    pub fn new(cfg: Arc<Config>, seed: u64) -> Result<Simulation, SimError> {
        let physics = crate::sim::world::PhysicsConfig {
            cycle_dt: cfg.step,
            ..cfg.physics.clone()
        };
        let world = World::new(&physics)?;
        let models = ModelLibrary::load(&cfg.resolved_models_dir())?;
        let referee = Referee::new(cfg.rules.clone());
        let teams = TeamRegistry::new(CompositionRules {
            max_robot_type_count: cfg.rules.max_robot_type_count as usize,
            min_robot_types_count: cfg.rules.min_robot_types_count as usize,
            max_sum_two_robot_types: cfg.rules.max_sum_two_robot_types as usize,
        });
        Ok(Simulation {
            cfg,
            world,
            models,
            referee,
            teams,
            agents: BTreeMap::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            seed,
            server_time: 0.0,
            cycle: 0,
            structure_version: 0,
            spawned: 0,
            says: Vec::new(),
            selected: None,
            report: StepReport::default(),
            started: false,
            robot_log: LogLimit::for_clients(),
            teamless_log: LogLimit::new(LOUD_ERRORS, Duration::from_secs(1)),
            text: String::with_capacity(8192),
        })
    }

    /// The seed of the server RNG.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Cycles simulated so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Server time (f32 accumulator).
    pub fn server_time(&self) -> f32 {
        self.server_time
    }

    /// The physics world (read-only).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The referee (read-only).
    pub fn referee(&self) -> &Referee {
        &self.referee
    }

    /// Number of connected agents (with or without a robot).
    pub fn agent_count(&self) -> usize {
        self.agents.values().filter(|a| !a.closing).count()
    }

    // ----- read phase ------------------------------------------------------

    /// A new agent connection (read phase).
    pub fn connect(&mut self, conn: ConnId, peer: SocketAddr) {
        let rng = ChaCha8Rng::seed_from_u64(self.rng.gen());
        self.agents.insert(
            conn,
            Agent {
                peer,
                robot: None,
                model: None,
                side: None,
                team: None,
                unum: 0,
                announce_identity: false,
                counter: 0,
                frames_sent: 0,
                synced: false,
                got_message: false,
                in_lockstep: false,
                joined_at_frame: None,
                closing: false,
                scene_failed: false,
                pending_scene: None,
                pending_init: None,
                pending_beam: None,
                outgoing: None,
                heard: Heard::default(),
                budget: HearBudget::new(),
                calibration: Vector3::zeros(),
                rng,
                accelerometer: Accelerometer::default(),
                last_sane: None,
                errors: 0,
                error_log: LogLimit::new(LOUD_ERRORS, Duration::from_secs(1)),
            },
        );
        debug!(conn, %peer, "agent registered");
    }

    /// The connection has gone (read phase); the robot leaves in the next
    /// step, its number is released, nothing else changes.
    pub fn disconnect(&mut self, conn: ConnId, reason: &str) {
        if let Some(a) = self.agents.get_mut(&conn) {
            // Agents that never joined a team share one thinned stream of
            // lines (the network side logs their connection too), so a
            // connection flood cannot flood the log.
            if a.side.is_some() {
                info!(conn, peer = %a.peer, team = ?a.team, unum = a.unum, %reason, "agent left");
            } else if a.robot.is_none() {
                debug!(conn, peer = %a.peer, %reason, "agent without a robot left");
            } else if let Some(skipped) = self.robot_log.admit_at(f64::from(self.server_time)) {
                info!(conn, peer = %a.peer, %reason, skipped, "agent without a team left");
            }
            a.closing = true;
        }
    }

    /// One decoded message of an agent (read phase). Hinge speeds are set
    /// at once, `say` is queued for this cycle's broadcast, `syn` marks the
    /// agent synced, `scene`/`init`/`beam` wait for the physics step.
    pub fn receive(
        &mut self,
        conn: ConnId,
        commands: Vec<Result<Command, DecodeError>>,
        parse_error: Option<ParseError>,
    ) {
        let now = self.server_time;
        let Some(agent) = self.agents.get_mut(&conn) else {
            return;
        };
        if agent.closing {
            return;
        }
        agent.got_message = true;
        if let Some(e) = parse_error {
            bad_input(
                now,
                conn,
                agent,
                &mut self.teamless_log,
                format_args!("malformed S-expression: {e} (rest of message dropped)"),
            );
        }
        for cmd in commands {
            let cmd = match cmd {
                Ok(c) => c,
                Err(DecodeError::NotACommand(_)) => continue,
                Err(e) => {
                    bad_input(
                        now,
                        conn,
                        agent,
                        &mut self.teamless_log,
                        format_args!("{e}"),
                    );
                    continue;
                }
            };
            match cmd {
                Command::Scene(scene) => {
                    if agent.robot.is_some() || agent.pending_scene.is_some() {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("second `scene` ignored"),
                        );
                    } else {
                        agent.pending_scene = Some(scene);
                    }
                }
                // Every other command needs a robot. A `(syn)` sent with
                // `scene` (RoboNewbie does) is dropped quietly.
                Command::Syn if agent.robot.is_none() => {
                    debug!(conn, "(syn) before the robot exists dropped");
                }
                _ if agent.robot.is_none() => {
                    bad_input(
                        now,
                        conn,
                        agent,
                        &mut self.teamless_log,
                        format_args!("command before the robot exists dropped: {cmd:?}"),
                    );
                }
                Command::Syn => {
                    agent.synced = true;
                    agent.in_lockstep |= agent.frames_sent > 0;
                }
                Command::Hinge { name, speed } => {
                    let (Some(robot), Some(model)) = (agent.robot, agent.model.clone()) else {
                        continue;
                    };
                    match model.joint_by_effector(name) {
                        Some(j) => self.world.set_joint_speed(robot, j, speed),
                        None => bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!(
                                "unknown effector `{name}` for robot type {}",
                                model.robot_type
                            ),
                        ),
                    }
                }
                Command::Init(init) => {
                    if agent.side.is_some() {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("second `init` ignored"),
                        );
                    } else {
                        agent.pending_init = Some(init);
                    }
                }
                Command::Beam(beam) => {
                    if agent.side.is_none() {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("`beam` before a successful `init` ignored"),
                        );
                    } else {
                        agent.pending_beam = Some(beam);
                    }
                }
                Command::Say(msg) => {
                    if agent.side.is_none() {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("`say` without a team ignored"),
                        );
                    } else if let Err(e) = hear::validate_say(&msg) {
                        bad_input(
                            now,
                            conn,
                            agent,
                            &mut self.teamless_log,
                            format_args!("`say` dropped: {e}"),
                        );
                    } else {
                        self.says.push((conn, msg));
                    }
                }
            }
        }
    }

    /// Whether the sync-mode read phase may end: every agent that has a
    /// robot (or asked for one) has answered the frames it was sent. With
    /// no such agent the cycle waits (the reference free-runs; waiting
    /// keeps sync-mode logs independent of wall time).
    ///
    /// A new agent counts as answered, whether it sent anything or not, as
    /// in the reference's grace period, until it answers a frame with
    /// `(syn)` (from then on it is waited for, so an agent in lockstep from
    /// its first frame never reads frames sent ahead of it), but no longer
    /// than `sync_grace_frames` frames after the one that told it its
    /// number. The reference counts its grace from the connection; counting
    /// from the team join is more forgiving and never stalls a client that
    /// drives several agents from one loop and answers a new agent's frames
    /// only once it has seen its number (a connection that never joins is
    /// closed by the idle timeout). A scripted start
    /// (`sync_wait_for_agents` > 0) instead waits for some message in
    /// answer to each of the first `sync_grace_frames` frames, so the
    /// agents' `init` and `beam` land in the same cycle every run.
    pub fn barrier_satisfied(&self) -> bool {
        if !self.started {
            let asked = self.agents.values().filter(|a| a.in_barrier()).count();
            if asked < self.cfg.sync_wait_for_agents.max(1) {
                return false;
            }
        }
        let scripted = self.cfg.sync_wait_for_agents > 0;
        let grace = u64::from(self.cfg.sync_grace_frames);
        let mut participants = 0;
        for a in self.agents.values() {
            if !a.in_barrier() {
                continue;
            }
            participants += 1;
            if a.frames_sent == 0 {
                continue;
            }
            let answered = if scripted {
                a.synced || (a.frames_sent <= grace && a.got_message)
            } else {
                let in_grace =
                    !a.in_lockstep && a.joined_at_frame.is_none_or(|j| a.frames_sent <= j + grace);
                a.synced || in_grace
            };
            if !answered {
                return false;
            }
        }
        participants > 0
    }

    /// Agents the barrier is waiting for (for the sync-timeout log line).
    pub fn unsynced_agents(&self) -> Vec<String> {
        self.agents
            .iter()
            .filter(|(_, a)| a.in_barrier() && a.frames_sent > 0 && !a.synced)
            .map(|(c, a)| format!("conn {c} {}", a.label()))
            .collect()
    }

    // ----- send phase ------------------------------------------------------

    /// The frames built in the previous prepare phase, in connection order.
    /// The driver reports back which were delivered with
    /// [`Simulation::frame_delivered`].
    pub fn take_outgoing(&mut self) -> Vec<(ConnId, Bytes)> {
        self.agents
            .iter_mut()
            .filter_map(|(c, a)| a.outgoing.take().map(|f| (*c, f)))
            .collect()
    }

    /// A frame was queued for the connection.
    pub fn frame_delivered(&mut self, conn: ConnId) {
        if let Some(a) = self.agents.get_mut(&conn) {
            a.frames_sent += 1;
        }
    }

    // ----- step and prepare phases -----------------------------------------

    /// Ends the read phase (broadcasts), runs the physics step with the
    /// stored scene/init/beam, the referee, advances the clocks, and builds
    /// every agent's next frame.
    pub fn step(&mut self) -> StepReport {
        let starting = !self.started;
        self.started |= self.agents.values().any(|a| a.in_barrier());
        self.broadcast_says();
        self.remove_departed();
        self.execute_scenes(starting);
        self.execute_inits();
        self.execute_beams();
        let t0 = std::time::Instant::now();
        self.world.step();
        self.rebuild_broken_robots();
        self.update_accelerometers();
        let t1 = std::time::Instant::now();
        self.run_referee();
        self.server_time += self.cfg.step;
        self.cycle += 1;
        let t2 = std::time::Instant::now();
        self.prepare_frames();
        let t3 = std::time::Instant::now();
        // Stage timings are measured, never used by the simulation, so
        // they cannot affect determinism.
        self.report.stages = StageTimes {
            physics_us: (t1 - t0).as_micros() as u64,
            referee_us: (t2 - t1).as_micros() as u64,
            perception_us: (t3 - t2).as_micros() as u64,
        };
        std::mem::take(&mut self.report)
    }

    fn broadcast_says(&mut self) {
        let says = std::mem::take(&mut self.says);
        for (speaker, msg) in says {
            let Some(sp) = self.agents.get(&speaker) else {
                continue;
            };
            let (Some(side), Some(team), Some(robot)) = (sp.side, sp.team.clone(), sp.robot) else {
                continue;
            };
            let from = self
                .world
                .part_pose(robot, self.torso_of(speaker))
                .translation
                .vector;
            for (conn, listener) in self.agents.iter_mut() {
                if *conn == speaker {
                    // A second say in one cycle replaces the self copy.
                    listener.heard.own_copy = Some(msg.clone());
                    continue;
                }
                let (Some(lside), Some(lrobot), Some(lmodel)) =
                    (listener.side, listener.robot, listener.model.as_ref())
                else {
                    continue;
                };
                if listener.closing {
                    continue;
                }
                let to = self
                    .world
                    .part_pose(lrobot, lmodel.torso)
                    .translation
                    .vector;
                if !hear::in_hearing_range(to, from) {
                    continue;
                }
                let own = lside == side;
                let slot = if own {
                    &mut listener.heard.team
                } else {
                    &mut listener.heard.opponent
                };
                if slot.is_none() && listener.budget.try_accept(own) {
                    let dir = hear::hear_direction(to, from, lside);
                    *slot = Some((team.clone(), dir, msg.clone()));
                }
            }
        }
    }

    fn torso_of(&self, conn: ConnId) -> usize {
        self.agents
            .get(&conn)
            .and_then(|a| a.model.as_ref())
            .map(|m| m.torso)
            .unwrap_or(0)
    }

    fn remove_departed(&mut self) {
        let gone: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.closing)
            .map(|(c, _)| *c)
            .collect();
        for conn in gone {
            if let Some(a) = self.agents.remove(&conn) {
                if let Some(robot) = a.robot {
                    self.world.remove_robot(robot);
                    self.structure_version += 1;
                }
                if let Some(side) = a.side {
                    self.teams.leave(side, a.unum);
                }
                if self.selected == Some(conn) {
                    self.selected = None;
                }
            }
        }
    }

    /// Builds the requested robots. In connection order, a few a cycle:
    /// building a robot is the costliest thing a client can ask for, and
    /// one that connects, asks for a robot and leaves, over and over, must
    /// not slow the match. The cycle that starts the match (`starting`)
    /// builds every robot asked for, so a scripted start
    /// (`sync_wait_for_agents`) sends all its agents their first frame
    /// together.
    fn execute_scenes(&mut self, starting: bool) {
        let most = if starting {
            usize::MAX
        } else {
            MAX_NEW_ROBOTS_PER_CYCLE
        };
        let conns: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.pending_scene.is_some())
            .map(|(c, _)| *c)
            .take(most)
            .collect();
        for conn in conns {
            let Some(agent) = self.agents.get_mut(&conn) else {
                continue;
            };
            let Some(scene) = agent.pending_scene.take() else {
                continue;
            };
            match self.models.resolve(&scene.path, &scene.args) {
                Ok(model) => {
                    // Robots that have not been placed yet wait standing in
                    // a row behind the -y touch line, one spot each, instead
                    // of piling up at the reference's (0, -1, 1.5).
                    let k = self.spawned;
                    self.spawned = self.spawned.wrapping_add(1);
                    let half_l = self.cfg.rules.field_length / 2.0;
                    let x = -half_l + 1.0 + (k % 24) as f32 * (2.0 * half_l - 2.0) / 23.0;
                    let y = -self.cfg.rules.field_width / 2.0 - 1.5 - (k / 24 % 4) as f32;
                    let z = model.standing_height() + 0.005;
                    let robot = self
                        .world
                        .add_robot(model.clone(), Vector3::new(x, y, z), 90.0);
                    agent.calibration = vision::draw_calibration(&self.cfg.vision, &mut agent.rng);
                    agent.robot = Some(robot);
                    agent.model = Some(model);
                    agent.scene_failed = false;
                    self.structure_version += 1;
                    if let Some(skipped) = self.robot_log.admit_at(f64::from(self.server_time)) {
                        info!(conn, peer = %agent.peer, scene = %scene.path, args = ?scene.args, skipped, "robot created");
                    }
                }
                Err(e) => {
                    agent.scene_failed = true;
                    self.report.status.push((conn, AgentStatus::SceneRefused));
                    if let Some(skipped) = self.robot_log.admit_at(f64::from(self.server_time)) {
                        warn!(conn, peer = %agent.peer, cause = %e, skipped, "scene refused; the agent gets no robot");
                    }
                }
            }
        }
    }

    fn execute_inits(&mut self) {
        let conns: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.pending_init.is_some())
            .map(|(c, _)| *c)
            .collect();
        for conn in conns {
            let Some(agent) = self.agents.get_mut(&conn) else {
                continue;
            };
            let (Some(init), Some(robot), Some(model)) =
                (agent.pending_init.take(), agent.robot, agent.model.clone())
            else {
                continue;
            };
            match self
                .teams
                .join(init.team.as_deref(), init.unum, model.robot_type)
            {
                Ok((side, unum, team)) => {
                    agent.side = Some(side);
                    agent.unum = unum;
                    agent.team = Some(team);
                    agent.announce_identity = true;
                    agent.joined_at_frame = Some(agent.frames_sent);
                    self.report.status.push((
                        conn,
                        AgentStatus::Joined {
                            team: agent.team.as_deref().unwrap_or("").to_owned(),
                            unum,
                        },
                    ));
                    let (x, y, heading) = self.teams.next_sideline_slot(
                        side,
                        self.cfg.rules.field_length,
                        self.cfg.rules.field_width,
                        self.cfg.rules.agent_radius,
                    );
                    let z = placement_height(&self.cfg, &model);
                    self.world
                        .place_robot(robot, Vector3::new(x, y, z), heading);
                    self.structure_version += 1;
                    info!(conn, team = %agent.label(), side = side.agent_name(), "agent joined");
                }
                Err(e) => {
                    // Deviation: the robot stays on its own waiting spot
                    // instead of being dropped from 10 m onto the centre
                    // spot, where failed robots would pile up.
                    warn!(conn, peer = %agent.peer, cause = %e, "init failed; the robot has no team");
                }
            }
        }
    }

    fn execute_beams(&mut self) {
        let conns: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.pending_beam.is_some())
            .map(|(c, _)| *c)
            .collect();
        for conn in conns {
            let Some(agent) = self.agents.get_mut(&conn) else {
                continue;
            };
            let (Some(beam), Some(side), Some(robot), Some(model)) = (
                agent.pending_beam.take(),
                agent.side,
                agent.robot,
                agent.model.clone(),
            ) else {
                continue;
            };
            match self
                .referee
                .beam_target(side, beam.x, beam.y, beam.rot, &mut self.rng)
            {
                Some((x, y, heading)) => {
                    let z = placement_height(&self.cfg, &model);
                    let (x, y) = free_spot(&self.world, robot, x, y);
                    self.world
                        .place_robot(robot, Vector3::new(x, y, z), heading);
                }
                None => {
                    debug!(conn, mode = %self.referee.play_mode(), "beam ignored in this play mode")
                }
            }
        }
    }

    /// A robot whose bodies left the finite world (a numerical blow-up in
    /// the solver) is rebuilt standing where its torso was last seen sane,
    /// so one bad robot never poisons the rest of the match.
    fn rebuild_broken_robots(&mut self) {
        let broken: Vec<ConnId> = self
            .agents
            .iter()
            .filter(|(_, a)| {
                a.robot.is_some_and(|r| {
                    let m = self.world.robot_model(r);
                    (0..m.parts.len()).any(|p| {
                        let t = self.world.part_pose(r, p).translation.vector;
                        !t.iter().all(|x| x.is_finite() && x.abs() < 1.0e3)
                    })
                })
            })
            .map(|(c, _)| *c)
            .collect();
        for conn in broken {
            let Some(a) = self.agents.get_mut(&conn) else {
                continue;
            };
            let (Some(old), Some(model)) = (a.robot, a.model.clone()) else {
                continue;
            };
            let last = a.last_sane.unwrap_or_else(|| Vector3::new(0.0, -12.0, 0.0));
            let z = placement_height(&self.cfg, &model);
            self.world.remove_robot(old);
            let robot = self
                .world
                .add_robot(model, Vector3::new(last.x, last.y, z), 0.0);
            a.robot = Some(robot);
            a.accelerometer.forget_history();
            self.structure_version += 1;
            tracing::error!(
                conn,
                team = a.team.as_deref().unwrap_or("-"),
                unum = a.unum,
                "physics blew up for this robot; rebuilt it standing at its last sane position"
            );
        }
        for a in self.agents.values_mut() {
            if let (Some(r), Some(m)) = (a.robot, a.model.as_ref()) {
                let t = self.world.part_pose(r, m.torso).translation.vector;
                if t.iter().all(|x| x.is_finite()) {
                    a.last_sane = Some(t);
                }
            }
        }
    }

    fn update_accelerometers(&mut self) {
        let dt = self.cfg.step;
        for a in self.agents.values_mut() {
            let (Some(robot), Some(model)) = (a.robot, a.model.as_ref()) else {
                continue;
            };
            let torso = self.world.part_pose(robot, model.torso);
            a.accelerometer
                .update(&torso.rotation, self.world.torso_linvel(robot), dt);
        }
    }

    /// What the referee needs to know about every robot with a team.
    fn robot_facts(&self) -> Vec<RobotFacts> {
        let mut robots = Vec::new();
        for (conn, a) in &self.agents {
            let (Some(side), Some(robot), Some(model)) = (a.side, a.robot, a.model.as_ref()) else {
                continue;
            };
            let torso = self.world.part_pose(robot, model.torso);
            let (mut lo, mut hi) = (Vector3::repeat(f32::MAX), Vector3::repeat(f32::MIN));
            for p in 0..model.parts.len() {
                let t = self.world.part_pose(robot, p).translation.vector;
                lo = lo.inf(&t);
                hi = hi.sup(&t);
            }
            robots.push(RobotFacts {
                id: *conn as u32,
                side,
                unum: a.unum,
                torso: torso.translation.vector,
                torso_up: torso.rotation * Vector3::z(),
                velocity: self.world.torso_linvel(robot),
                bbox_min: lo,
                bbox_max: hi,
            });
        }
        robots
    }

    fn run_referee(&mut self) {
        let robots = self.robot_facts();
        let by_handle: BTreeMap<RobotHandle, u32> = self
            .agents
            .iter()
            .filter(|(_, a)| a.side.is_some())
            .filter_map(|(c, a)| a.robot.map(|r| (r, *c as u32)))
            .collect();
        let touches: Vec<u32> = self
            .world
            .ball_touches()
            .iter()
            .filter_map(|h| by_handle.get(h).copied())
            .collect();
        let contacts: Vec<RobotContact> = self
            .world
            .robot_contacts()
            .iter()
            .filter_map(|(a, b)| {
                let (ia, ib) = (*by_handle.get(a)?, *by_handle.get(b)?);
                let pa = torso_position(&self.world, *a);
                let pb = torso_position(&self.world, *b);
                Some(RobotContact {
                    a: ia,
                    b: ib,
                    point: (pa + pb) / 2.0,
                })
            })
            .collect();
        let facts = WorldFacts {
            ball: self.world.ball_position(),
            ball_velocity: self.world.ball_velocity(),
            ball_touches: &touches,
            robots: &robots,
            robot_contacts: &contacts,
            self_collisions: &[],
            connected_agents: self.agent_count(),
            dt: self.cfg.step,
        };
        let decisions = self.referee.step(&facts, &mut self.rng);
        self.apply_decisions(decisions);
    }

    fn apply_decisions(&mut self, decisions: Vec<Decision>) {
        for d in decisions {
            match d {
                Decision::MoveBall { pos, vel } => {
                    self.world.set_ball_position(pos);
                    self.world.set_ball_velocity(vel);
                }
                Decision::MoveRobot {
                    id,
                    pos,
                    heading_deg,
                } => {
                    if let Some(robot) = self.agents.get(&u64::from(id)).and_then(|a| a.robot) {
                        match heading_deg {
                            Some(h) => self.world.place_robot(robot, pos, h),
                            None => self.world.shift_robot(robot, pos),
                        }
                    }
                }
                Decision::SwapSides => {
                    for a in self.agents.values_mut() {
                        a.side = a.side.map(Side::opponent);
                    }
                    self.teams.swap_sides();
                    self.structure_version += 1;
                }
                Decision::Quit => self.report.quit = true,
            }
        }
    }

    fn prepare_frames(&mut self) {
        // The robots vision can see: those with a team. The names are
        // cloned out so the agents can be updated while `seen` is alive.
        let mut names: Vec<VisibleRobot> = Vec::new();
        for (conn, a) in &self.agents {
            let (Some(side), Some(team), Some(robot), Some(model)) =
                (a.side, a.team.clone(), a.robot, a.model.as_ref())
            else {
                continue;
            };
            if a.closing {
                continue;
            }
            let mut parts = [None; 5];
            for (slot, name) in parts.iter_mut().zip(VISIBLE_PARTS) {
                *slot = model
                    .part_by_name(name)
                    .map(|p| self.world.part_pose(robot, p).translation.vector);
            }
            names.push(VisibleRobot {
                conn: *conn,
                side,
                team,
                unum: a.unum,
                parts,
            });
        }
        let owners: Vec<ConnId> = names.iter().map(|n| n.conn).collect();
        let mut seen: Vec<SeenRobot<'_>> = names
            .iter()
            .map(|n| SeenRobot {
                team: &n.team,
                side: n.side,
                unum: n.unum,
                is_self: false,
                parts: n.parts,
            })
            .collect();
        let ball = self.world.ball_position();
        let game_time = self.referee.game_time();
        let mode = self.referee.play_mode();
        let (sl, sr) = self.referee.scores();
        let text = &mut self.text;
        for (conn, a) in self.agents.iter_mut() {
            a.counter += 1;
            a.synced = false;
            a.got_message = false;
            let (Some(robot), Some(model)) = (a.robot, a.model.clone()) else {
                continue;
            };
            if a.closing {
                continue;
            }
            text.clear();
            time::write_time(text, self.server_time);
            let identity = if a.announce_identity {
                a.announce_identity = false;
                a.side.map(|side| (a.unum, side))
            } else {
                None
            };
            let state = GameState {
                identity,
                score: self.cfg.rules.report_score.then_some((sl, sr)),
                game_time,
                play_mode: mode.name(),
            };
            game_state::write_game_state(text, &state);
            let heard = std::mem::take(&mut a.heard);
            let label = |t: &Arc<str>| -> Option<Arc<str>> {
                self.cfg.rules.label_messages.then(|| t.clone())
            };
            if let Some(msg) = &heard.own_copy {
                let own = a.team.as_ref().and_then(label);
                hear::write_hear(text, own.as_deref(), game_time, None, msg);
            }
            for (team, dir, msg) in [&heard.team, &heard.opponent].into_iter().flatten() {
                hear::write_hear(text, label(team).as_deref(), game_time, Some(*dir), msg);
            }
            a.budget.tick();
            for slot in &model.perceptor_order {
                match *slot {
                    PerceptorSlot::Gyro => {
                        gyro::write_gyro(text, self.world.torso_angvel_local(robot));
                    }
                    PerceptorSlot::Acc => a.accelerometer.write(text),
                    PerceptorSlot::Joint(j) => hinge_joint::write_hinge_joint(
                        text,
                        &model.joints[j].perceptor,
                        self.world.joint_angle_deg(robot, j),
                    ),
                    PerceptorSlot::Vision => {
                        if self.cfg.vision.is_vision_cycle(a.counter) {
                            let me = owners.iter().position(|c| c == conn);
                            if let Some(i) = me {
                                seen[i].is_self = true;
                            }
                            let input = VisionInput {
                                camera: self.world.part_pose(robot, model.head),
                                side: a.side,
                                calibration: a.calibration,
                                ball,
                                robots: &seen,
                                field: self.cfg.field_geometry(),
                            };
                            vision::write_see(text, &input, &self.cfg.vision, &mut a.rng);
                            if let Some(i) = me {
                                seen[i].is_self = false;
                            }
                        }
                    }
                    PerceptorSlot::Force(s) => {
                        if let Some((c, f)) = self.world.foot_force(robot, s) {
                            foot_force::write_foot_force(text, &model.foot_sensors[s].name, c, f);
                        }
                    }
                }
            }
            a.outgoing = framing::encode(text.as_bytes());
        }
    }

    // ----- monitor side ----------------------------------------------------

    /// A command from a monitor/trainer connection (read phase).
    pub fn monitor_command(&mut self, cmd: MonitorCommand) {
        debug!(?cmd, "monitor command");
        match cmd {
            MonitorCommand::KickOff(side) => self.referee.kick_off(side, &mut self.rng),
            MonitorCommand::PlayMode(m) => self.referee.set_play_mode(m),
            MonitorCommand::DropBall => {
                let facts_ball = self.world.ball_position();
                let d = self.referee.drop_ball(facts_ball);
                self.apply_decisions(d);
            }
            MonitorCommand::Ball { pos, vel } => {
                if let Some(p) = pos.filter(|p| p.iter().all(|v| v.is_finite())) {
                    self.world.set_ball_position(p);
                }
                if let Some(v) = vel.filter(|v| v.iter().all(|x| x.is_finite())) {
                    self.world.set_ball_velocity(v);
                }
            }
            MonitorCommand::AgentPos { robot, pos } => {
                if let Some(h) = self.find_robot(robot).and_then(|c| self.agents[&c].robot) {
                    if pos.iter().all(|v| v.is_finite()) {
                        self.world.shift_robot(h, pos);
                    }
                }
            }
            MonitorCommand::AgentMove {
                robot,
                pos,
                yaw_deg,
            } => {
                if let Some(h) = self.find_robot(robot).and_then(|c| self.agents[&c].robot) {
                    if pos.iter().all(|v| v.is_finite()) && yaw_deg.is_finite() {
                        // The Nao faces its local +y: yaw -90 faces +x.
                        self.world.place_robot(h, pos, yaw_deg + 90.0);
                    }
                }
            }
            MonitorCommand::AgentBattery { .. } | MonitorCommand::Ignored(_) => {}
            MonitorCommand::AgentPush => {
                if let Some(conn) = self.selected {
                    self.push_away(conn);
                }
            }
            MonitorCommand::Select(sel) => self.select(sel),
            MonitorCommand::Kill(r) => {
                let target = match r {
                    Some(r) => self.find_robot(r),
                    None => self.selected,
                };
                if let Some(conn) = target {
                    info!(conn, "robot killed by the trainer; closing the connection");
                    self.disconnect(conn, "killed by trainer");
                    self.report.close.push(conn);
                }
            }
            MonitorCommand::Repos(r) => {
                let target = match r {
                    Some(r) => self.find_robot(r),
                    None => self.selected,
                };
                if let Some(conn) = target {
                    let a = &self.agents[&conn];
                    if let (Some(side), Some(h)) = (a.side, a.robot) {
                        let pos = self.referee.outside_position(
                            side,
                            a.unum,
                            self.world.ball_position().y,
                        );
                        self.world.shift_robot(h, pos);
                    }
                }
            }
            MonitorCommand::Time(t) => {
                if t.is_finite() && t >= 0.0 {
                    self.referee.set_game_time(t);
                }
            }
            MonitorCommand::Score(l, r) => self.referee.set_score(l, r),
            MonitorCommand::KillSim => {
                info!("killsim from a monitor: shutting down");
                self.report.quit = true;
            }
            MonitorCommand::ReqFullState | MonitorCommand::Auth(_) => {}
        }
    }

    /// Whether a monitor asked to stop (checked by the driver after the
    /// read phase).
    pub fn quit_requested(&self) -> bool {
        self.report.quit
    }

    fn find_robot(&self, r: RobotRef) -> Option<ConnId> {
        self.agents
            .iter()
            .find(|(_, a)| {
                a.side == Some(r.team) && a.unum == r.unum && a.robot.is_some() && !a.closing
            })
            .map(|(c, _)| *c)
    }

    fn select(&mut self, sel: Selection) {
        self.selected = match sel {
            Selection::Clear => None,
            Selection::Robot(r) => self.find_robot(r),
            Selection::Next => {
                let robots: Vec<ConnId> = self
                    .agents
                    .iter()
                    .filter(|(_, a)| a.robot.is_some() && !a.closing)
                    .map(|(c, _)| *c)
                    .collect();
                match self
                    .selected
                    .and_then(|s| robots.iter().position(|c| *c == s))
                {
                    Some(i) => robots.get((i + 1) % robots.len().max(1)).copied(),
                    None => robots.first().copied(),
                }
            }
        };
    }

    fn push_away(&mut self, conn: ConnId) {
        let Some(a) = self.agents.get(&conn) else {
            return;
        };
        if a.side.is_none() || a.robot.is_none() {
            return;
        }
        let robots = self.robot_facts();
        let facts = WorldFacts {
            ball: self.world.ball_position(),
            ball_velocity: self.world.ball_velocity(),
            ball_touches: &[],
            robots: &robots,
            robot_contacts: &[],
            self_collisions: &[],
            connected_agents: self.agent_count(),
            dt: self.cfg.step,
        };
        let decisions = self.referee.push_away(&facts, conn as u32, &mut self.rng);
        self.apply_decisions(decisions);
    }

    // ----- snapshot ----------------------------------------------------------

    /// A copy of everything monitors and the log show.
    pub fn snapshot(&self) -> WorldSnapshot {
        let mut robots: Vec<(u8, u8, ConnId, RobotSnapshot)> = Vec::new();
        for (conn, a) in &self.agents {
            let (Some(robot), Some(model)) = (a.robot, a.model.as_ref()) else {
                continue;
            };
            if a.closing {
                continue;
            }
            let parts = model
                .parts
                .iter()
                .enumerate()
                .map(|(i, p)| PartPose {
                    name: p.name.clone(),
                    pose: self.world.part_pose(robot, i),
                })
                .collect();
            let order = match a.side {
                Some(Side::Left) => 0,
                Some(Side::Right) => 1,
                None => 2,
            };
            robots.push((
                order,
                a.unum,
                *conn,
                RobotSnapshot {
                    id: *conn as u32,
                    side: a.side,
                    team: a.team.clone(),
                    unum: a.unum,
                    robot_type: model.robot_type,
                    parts,
                    selected: self.selected == Some(*conn),
                },
            ));
        }
        robots.sort_by_key(|(o, u, c, _)| (*o, *u, *c));
        let (sl, sr) = self.referee.scores();
        WorldSnapshot {
            cycle: self.cycle,
            server_time: self.server_time,
            game: GameSnapshot {
                game_time: self.referee.game_time(),
                play_mode: self.referee.play_mode(),
                half: self.referee.half(),
                score_left: sl,
                score_right: sr,
                team_left: self.teams.name(Side::Left).cloned(),
                team_right: self.teams.name(Side::Right).cloned(),
                fouls: self
                    .referee
                    .fouls()
                    .iter()
                    .map(|f| FoulRecord {
                        kind: f.kind,
                        side: f.side,
                        unum: f.unum,
                    })
                    .collect(),
            },
            ball: self.world.ball_pose(),
            ball_velocity: self.world.ball_velocity(),
            robots: robots.into_iter().map(|(_, _, _, r)| r).collect(),
            structure_version: self.structure_version,
        }
    }
}

/// Torso height for placements: `AgentRadius`, raised where a robot type's
/// straight legs are longer (type 3) so the feet never start in the ground.
fn placement_height(cfg: &Config, model: &RobotModel) -> f32 {
    cfg.rules.agent_radius.max(model.standing_height() + 0.005)
}

/// Closest spot to (x, y) at least [`MIN_ROBOT_SPACING`] from every other
/// robot's torso (deviation: the reference beams robots into each other,
/// which makes the contact solver fling them away). Searches rings of
/// 0.5 m around the spot.
fn free_spot(world: &World, me: RobotHandle, x: f32, y: f32) -> (f32, f32) {
    let others: Vec<Vector3<f32>> = world
        .robots()
        .into_iter()
        .filter(|h| *h != me)
        .map(|h| torso_position(world, h))
        .collect();
    let free = |px: f32, py: f32| {
        others
            .iter()
            .all(|o| (o.x - px).hypot(o.y - py) >= MIN_ROBOT_SPACING)
    };
    if free(x, y) {
        return (x, y);
    }
    for ring in 1..=8 {
        let r = ring as f32 * 0.5;
        for k in 0..(8 * ring) {
            let a = std::f32::consts::TAU * k as f32 / (8 * ring) as f32;
            let (px, py) = (x + r * a.cos(), y + r * a.sin());
            if free(px, py) {
                return (px, py);
            }
        }
    }
    (x, y)
}

/// Torso centre of a robot in the field frame.
fn torso_position(world: &World, h: RobotHandle) -> Vector3<f32> {
    world
        .part_pose(h, world.robot_model(h).torso)
        .translation
        .vector
}

/// Logs one bad command of an agent. The lines are thinned per agent in a
/// team and over all agents without one (on server time `now`), so a
/// flood of bad input cannot flood the log; every
/// line says how many bad commands the agent has sent in all and how many
/// lines were left out before it.
fn bad_input(
    now: f32,
    conn: ConnId,
    agent: &mut Agent,
    teamless_log: &mut LogLimit,
    what: std::fmt::Arguments<'_>,
) {
    agent.errors += 1;
    // Agents without a team share one limit: a client opening connection
    // after connection must not get a fresh burst of lines each time.
    let limit = if agent.side.is_some() {
        &mut agent.error_log
    } else {
        teamless_log
    };
    if let Some(skipped) = limit.admit_at(f64::from(now)) {
        warn!(
            conn,
            peer = %agent.peer,
            team = agent.team.as_deref().unwrap_or("-"),
            unum = agent.unum,
            count = agent.errors,
            skipped,
            "bad input: {what}"
        );
    }
}
