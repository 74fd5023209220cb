//! One simulation cycle (docs/protocol.md#the-cycle) and the per-agent state.
//!
//! [`Simulation`] owns the world, the referee, the team registry, the one
//! seeded RNG and every agent's protocol state. It does no I/O and reads no
//! clock: the driver feeds it the inputs of the read phase
//! ([`Simulation::connect`], [`Simulation::receive`], ...), takes the
//! percepts of the send phase ([`Simulation::take_outgoing`]: message text,
//! framed for the wire by the driver) and calls [`Simulation::step`] for
//! the physics step and the prepare phase.
//! Everything is processed in a fixed order (agents by connection id) so a
//! sync-mode run is reproducible from its seed and its agents' messages.
//!
//! Where things are:
//! * `agent`: one connection's protocol state, joining and leaving, and
//!   the thinned log of its bad input;
//! * `receive`: the read phase, each decoded agent command queued or
//!   applied;
//! * `barrier`: the sync-mode barrier (who the cycle waits for);
//! * `effectors`: one file per effector (`scene`, `init`, `beam`,
//!   `say`, hinge joints) carrying out what agents asked for;
//! * `referee`: the facts handed to the referee and its decisions
//!   applied to the world;
//! * `frames`: the prepare phase (each agent's perceptions collected and
//!   written by `crate::perception`) and the percepts of the send phase;
//! * `trainer`: monitor (trainer) commands, one file per group;
//! * `snapshot`: the copy of the match monitors and the log show.

use std::collections::BTreeMap;
use std::time::Duration;

use nalgebra::Vector3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::log_limit::{KindLimits, LogLimit};
use crate::rules::teams::{CompositionRules, TeamRegistry};
use crate::rules::Referee;
use crate::sim::config::SimConfig;
use crate::sim::model::{ModelLibrary, RobotModel};
use crate::sim::scene::SceneError;
use crate::sim::world::{RobotHandle, World};

mod agent;
mod barrier;
mod effectors;
mod frames;
mod receive;
mod referee;
mod snapshot;
mod trainer;

use agent::{Agent, LOUD_ERRORS};

/// Identifies one agent connection for the life of the server.
pub type ConnId = u64;

/// What a connection's handler is told about its agent: the team and
/// number for its log span, and whether the agent still owes the server
/// its `scene` (its join deadline, its slot).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AgentStatus {
    /// Connected, not in a team yet.
    #[default]
    Connecting,
    /// A `scene` arrived: the coming step builds the robot (or refuses the
    /// scene).
    SceneReceived,
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
    /// scene was refused in this step (news of the read phase comes from
    /// [`Simulation::take_status`]).
    pub status: Vec<(ConnId, AgentStatus)>,
    /// The referee or a monitor asked the server to stop.
    pub quit: bool,
}

/// The stages of one step, in order, as [`Simulation::step`] enters them
/// (the driver times them; the simulation itself reads no clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The rapier step, the blow-up guard and the accelerometers.
    Physics,
    /// The referee and the clocks.
    Referee,
    /// Building every agent's frame (vision included).
    Perception,
    /// The step is over.
    Done,
}

/// The whole simulated match.
pub struct Simulation {
    cfg: SimConfig,
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
    /// Thins the lines of trainer positions clamped into the field area.
    trainer_log: LogLimit,
    /// Thins the other lines agents cause (failed inits, joins and
    /// departures, robots the run-away guard rebuilt), each kind apart.
    client_log: KindLimits,
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
    /// Builds the world and loads the robot models. `seed` is the one the
    /// run uses: a random one is drawn by the caller, who prints it.
    pub fn new(cfg: SimConfig, seed: u64) -> Result<Simulation, SimError> {
        let world = World::with_field(&cfg.physics, cfg.step, &cfg.field_size())?;
        let models = ModelLibrary::load(&cfg.models)?;
        let referee = Referee::new(cfg.rules.clone());
        let teams = TeamRegistry::new(
            CompositionRules {
                max_robot_type_count: cfg.rules.max_robot_type_count as usize,
                min_robot_types_count: cfg.rules.min_robot_types_count as usize,
                max_sum_two_robot_types: cfg.rules.max_sum_two_robot_types as usize,
            },
            cfg.teams.clone(),
        );
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
            trainer_log: LogLimit::for_clients(),
            client_log: KindLimits::new(),
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

    /// News about agents from the read phase so far (a `scene` received),
    /// for the driver to pass on at once; news of a step comes in its
    /// [`StepReport`].
    pub fn take_status(&mut self) -> Vec<(ConnId, AgentStatus)> {
        std::mem::take(&mut self.report.status)
    }

    /// Number of connected agents (with or without a robot).
    pub fn agent_count(&self) -> usize {
        self.agents.values().filter(|a| !a.closing).count()
    }

    /// Ends the read phase (broadcasts), runs the physics step with the
    /// stored scene/init/beam, the referee, advances the clocks, and builds
    /// every agent's next frame. `enter` is called as each [`Stage`]
    /// begins, so the driver can time the stages; nothing it measures
    /// flows back into the simulation.
    pub fn step(&mut self, mut enter: impl FnMut(Stage)) -> StepReport {
        let starting = !self.started;
        self.started |= self.agents.values().any(|a| a.in_barrier());
        self.broadcast_says();
        self.remove_departed();
        self.execute_scenes(starting);
        self.execute_inits();
        self.execute_beams();
        enter(Stage::Physics);
        self.world.step();
        self.update_accelerometers();
        enter(Stage::Referee);
        self.run_referee();
        self.server_time += self.cfg.step;
        self.cycle += 1;
        enter(Stage::Perception);
        self.prepare_frames();
        enter(Stage::Done);
        std::mem::take(&mut self.report)
    }
}

/// Torso height for placements: `AgentRadius`, raised where a robot type's
/// straight legs are longer (type 3) so the feet never start in the ground.
fn placement_height(cfg: &SimConfig, model: &RobotModel) -> f32 {
    cfg.rules.agent_radius.max(model.standing_height() + 0.005)
}

/// Torso centre of a robot in the field frame.
fn torso_position(world: &World, h: RobotHandle) -> Vector3<f32> {
    world
        .part_pose(h, world.robot_model(h).torso)
        .translation
        .vector
}
