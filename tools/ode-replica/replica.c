/* A replica of the reference server's physics on ODE itself, the engine
 * the reference (rcssserver3d 0.7.1) runs on: one dWorldStep of 0.02 s
 * per cycle, the world, joint, motor, stop, contact and drag parameters of
 * spec/field-and-physics.md sections 3-7 and spec/nao-model.md section 4,
 * and the robot model this server builds (tools/src/bin/fit/model_dump.rs).
 *
 * A measuring instrument, not part of the server: it replays a recorded
 * gait's command stream open-loop, in the reference set-up (init spot, 10
 * warm-up cycles, beam to (-5, 0) facing +x), and prints per row the
 * torso's position and rotation, the ball, the hinge angles (degrees) and
 * the ball's velocity and angular velocity.
 *
 *   replica MODEL_FILE SENT_FILE [options] > rows.csv
 *     --nudge STEP JOINT SPEED  raise hinge JOINT's (index in MODEL_FILE)
 *                               command by SPEED rad/s for step STEP only
 *     --exact                   masses from ODE's shape helpers in double
 *                               precision instead of the file's inertias
 *     --quick N                 dWorldQuickStep with N iterations
 *     --mu X                    robot-ground Coulomb friction X instead of
 *                               unbounded friction with slip
 *     --slip S                  robot-ground slip (default 5e-3)
 *     --erp E --cfm C           robot-ground soft ERP / CFM (0.4 / 1e-4)
 *     --gcfm C                  global CFM (default 1e-5)
 *     --gerp E                  global ERP (default 0.2)
 *     --noadis                  auto-disable off
 *     --substeps N              N steps of 0.02/N s per cycle
 *     --part-drag K             angular drag of every robot part, N·m per
 *                               rad/s (default 0.01; the linear drag stays)
 *     --shift X                 beam X m further along x
 *     --ball-coulomb            the ball's contacts with Coulomb friction
 *                               mu = 1 instead of unbounded friction with slip
 *     --ball-hard               the ball's contacts without their soft ERP
 *                               and CFM (the global 0.2 / 1e-5)
 *     --nogyro                  the robot's bodies without ODE's gyroscopic term
 *     --torques                 add each hinge's constraint torque about its
 *                               axis (N.m, on the child, from dJointFeedback)
 *
 * Build: cc -O2 -o replica replica.c -lode -lm   (Debian: libode-dev)
 */
#include <ode/ode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define MAXP 32
#define MAXJ 32
#define MAXSTEPS 2000

typedef struct { char name[32]; double mass, I[3], pos[3]; char shape; double dim[3]; char mshape; double mdim[3]; } Part;
typedef struct { char eff[16]; int parent, child; double axis[3], anchor[3], lo, hi, vmax, fmax; } Joint;

static Part parts[MAXP]; static int np;
static Joint joints[MAXJ]; static int nj;
static dBodyID bodies[MAXP]; static dGeomID geoms[MAXP];
static dJointID hinges[MAXJ];
static dWorldID world; static dJointGroupID cgroup;
static dGeomID ground, ball_geom; static dBodyID ball;

/* per-step commands: (joint index, value) */
typedef struct { int j; double v; } Cmd;
static Cmd *cmds[MAXSTEPS]; static int ncmds[MAXSTEPS];
static int ball_set[MAXSTEPS]; static double ball_pos[MAXSTEPS][3];
static int nsteps;

static int want_torques = 0;
static dJointFeedback feedback[MAXJ];
static int no_gyro = 0;
static int exact_mass = 0, ball_coulomb = 0, ball_hard = 0;
static double g_mu = -1, g_slip = 5e-3, g_erp = 0.4, g_cfm = 1e-4;

static void load_model(const char *path) {
    FILE *f = fopen(path, "r"); char tag[4];
    if (!f) { perror(path); exit(1); }
    while (fscanf(f, "%3s", tag) == 1) {
        if (tag[0] == 'P') {
            Part *p = &parts[np++];
            fscanf(f, "%31s %lf %lf %lf %lf %lf %lf %lf %c %lf %lf %lf %c %lf %lf %lf", p->name, &p->mass, &p->I[0], &p->I[1], &p->I[2],
                   &p->pos[0], &p->pos[1], &p->pos[2], &p->shape, &p->dim[0], &p->dim[1], &p->dim[2],
                   &p->mshape, &p->mdim[0], &p->mdim[1], &p->mdim[2]);
        } else {
            Joint *j = &joints[nj++];
            fscanf(f, "%15s %d %d %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", j->eff, &j->parent, &j->child, &j->axis[0],
                   &j->axis[1], &j->axis[2], &j->anchor[0], &j->anchor[1], &j->anchor[2], &j->lo, &j->hi, &j->vmax, &j->fmax);
        }
    }
    fclose(f);
}

static int joint_by_eff(const char *e) {
    for (int i = 0; i < nj; i++) if (!strcmp(joints[i].eff, e)) return i;
    return -1;
}

static void load_sent(const char *path) {
    FILE *f = fopen(path, "r"); char line[8192];
    if (!f) { perror(path); exit(1); }
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        char *t1 = strchr(line, '\t'); if (!t1) continue;
        char *t2 = strchr(t1 + 1, '\t'); if (!t2) continue;
        int step = atoi(line);
        if (step < 0 || step >= MAXSTEPS) continue;
        *t2 = 0;
        char *chan = t1 + 1, *pay = t2 + 1;
        if (!strcmp(chan, "agent")) {
            if (step + 1 > nsteps) nsteps = step + 1;
            if (!cmds[step]) cmds[step] = calloc(64, sizeof(Cmd)); /* a later line of the same step adds to it */
            char *p = pay;
            while ((p = strchr(p, '('))) {
                char name[32]; double v;
                if (sscanf(p, "(%31s %lf)", name, &v) == 2) {
                    int j = joint_by_eff(name);
                    if (j >= 0 && ncmds[step] < 64) { cmds[step][ncmds[step]].j = j; cmds[step][ncmds[step]].v = v; ncmds[step]++; }
                }
                p++;
            }
        } else if (!strcmp(chan, "monitor") && !strncmp(pay, "(ball", 5)) {
            char *q = strstr(pay, "(pos ");
            if (q && sscanf(q, "(pos %lf %lf %lf)", &ball_pos[step][0], &ball_pos[step][1], &ball_pos[step][2]) == 3)
                ball_set[step] = 1;
        }
    }
    fclose(f);
}

/* model frame -> field: yaw so that model +y looks along field +x */
static void yaw_R(dMatrix3 R) { dRFromAxisAndAngle(R, 0, 0, 1, -M_PI / 2); }

static void rot_vec(const dReal *R, const double *v, double *out) {
    for (int i = 0; i < 3; i++) out[i] = R[4 * i] * v[0] + R[4 * i + 1] * v[1] + R[4 * i + 2] * v[2];
}

static void build_robot(double tx, double ty, double tz, dSpaceID space) {
    dMatrix3 R; yaw_R(R);
    for (int i = 0; i < np; i++) {
        Part *p = &parts[i];
        bodies[i] = dBodyCreate(world);
        double w[3]; rot_vec(R, p->pos, w);
        dBodySetPosition(bodies[i], tx + w[0], ty + w[1], tz + w[2]);
        dBodySetRotation(bodies[i], R);
        dMass m; dMassSetZero(&m);
        if (exact_mass && p->mshape == 'b') dMassSetBoxTotal(&m, p->mass, p->mdim[0], p->mdim[1], p->mdim[2]);
        else if (exact_mass && p->mshape == 's') dMassSetSphereTotal(&m, p->mass, p->mdim[0]);
        else if (exact_mass && p->mshape == 'c') dMassSetCapsuleTotal(&m, p->mass, 3, p->mdim[0], p->mdim[1]);
        else dMassSetParameters(&m, p->mass, 0, 0, 0, p->I[0], p->I[1], p->I[2], 0, 0, 0);
        dBodySetMass(bodies[i], &m);
        if (no_gyro) dBodySetGyroscopicMode(bodies[i], 0);
        geoms[i] = 0;
        if (p->shape == 'b') geoms[i] = dCreateBox(space, p->dim[0], p->dim[1], p->dim[2]);
        else if (p->shape == 's') geoms[i] = dCreateSphere(space, p->dim[0]);
        else if (p->shape == 'c') geoms[i] = dCreateCapsule(space, p->dim[0], p->dim[1]);
        if (geoms[i]) dGeomSetBody(geoms[i], bodies[i]);
    }
    for (int k = 0; k < nj; k++) {
        Joint *j = &joints[k];
        hinges[k] = dJointCreateHinge(world, 0);
        dJointAttach(hinges[k], bodies[j->child], bodies[j->parent]);
        double a[3], ax[3]; rot_vec(R, j->anchor, a); rot_vec(R, j->axis, ax);
        dJointSetHingeAnchor(hinges[k], tx + a[0], ty + a[1], tz + a[2]);
        dJointSetHingeAxis(hinges[k], ax[0], ax[1], ax[2]);
        dJointSetHingeParam(hinges[k], dParamLoStop, j->lo * M_PI / 180);
        dJointSetHingeParam(hinges[k], dParamHiStop, j->hi * M_PI / 180);
        dJointSetHingeParam(hinges[k], dParamVel, 0);
        dJointSetHingeParam(hinges[k], dParamFMax, j->fmax);
        dJointSetHingeParam(hinges[k], dParamCFM, 1e-8);
        dJointSetHingeParam(hinges[k], dParamStopERP, 0.8);
        dJointSetHingeParam(hinges[k], dParamStopCFM, 1e-8);
        dJointSetHingeParam(hinges[k], dParamBounce, 1);
        dJointSetHingeParam(hinges[k], dParamFudgeFactor, 1e-5);
    }
}

static int is_robot(dGeomID g) { for (int i = 0; i < np; i++) if (geoms[i] == g) return 1; return 0; }

static void collide_pair(dGeomID a, dGeomID b) {
    dContactGeom cg[4];
    int n = dCollide(a, b, 4, cg, sizeof(dContactGeom));
    int ra = is_robot(a), rb = is_robot(b);
    int ballpair = (a == ball_geom || b == ball_geom);
    for (int i = 0; i < n; i++) {
        dContact c; memset(&c, 0, sizeof c);
        c.geom = cg[i];
        if (ra || rb) {
            if (ballpair) { /* robot - ball */
                c.surface.mode = dContactBounce | dContactSoftERP | dContactSoftCFM | dContactSlip1 | dContactSlip2;
                c.surface.mu = dInfinity; c.surface.bounce = 0.8; c.surface.bounce_vel = 0.8;
                c.surface.soft_erp = 0.55; c.surface.soft_cfm = 0.02505; c.surface.slip1 = c.surface.slip2 = 0.3025;
            } else { /* robot - ground */
                if (g_mu >= 0) {
                    c.surface.mode = dContactSoftERP | dContactSoftCFM;
                    c.surface.mu = g_mu;
                } else {
                    c.surface.mode = dContactSoftERP | dContactSoftCFM | dContactSlip1 | dContactSlip2;
                    c.surface.mu = dInfinity; c.surface.slip1 = c.surface.slip2 = g_slip;
                }
                c.surface.soft_erp = g_erp; c.surface.soft_cfm = g_cfm;
            }
        } else { /* ball - ground */
            c.surface.mode = dContactBounce | dContactSoftERP | dContactSoftCFM | dContactSlip1 | dContactSlip2;
            c.surface.mu = dInfinity; c.surface.bounce = 0.8; c.surface.bounce_vel = 0.8;
            c.surface.soft_erp = 0.35; c.surface.soft_cfm = 0.05; c.surface.slip1 = c.surface.slip2 = 0.3025;
        }
        if (ballpair) {
            if (ball_coulomb) { c.surface.mode &= ~(dContactSlip1 | dContactSlip2); c.surface.mu = 1; }
            if (ball_hard) c.surface.mode &= ~(dContactSoftERP | dContactSoftCFM);
        }
        dJointID cj = dJointCreateContact(world, cgroup, &c);
        dJointAttach(cj, dGeomGetBody(a), dGeomGetBody(b));
    }
}

static void add_drag(dBodyID b, double kt) {
    const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
    dBodyAddForce(b, -0.01 * v[0], -0.01 * v[1], -0.01 * v[2]);
    dBodyAddTorque(b, -kt * w[0], -kt * w[1], -kt * w[2]);
}

static int quick = 0, substeps = 1;
static double part_drag = 0.01;

static void step(void) {
    for (int s = 0; s < substeps; s++) {
        for (int i = 0; i < np; i++) if (dBodyIsEnabled(bodies[i])) add_drag(bodies[i], part_drag);
        if (dBodyIsEnabled(ball)) add_drag(ball, 5e-5);
        for (int i = 0; i < np; i++) if (geoms[i]) { collide_pair(geoms[i], ground); collide_pair(geoms[i], ball_geom); }
        collide_pair(ball_geom, ground);
        if (quick) dWorldQuickStep(world, 0.02 / substeps); else dWorldStep(world, 0.02 / substeps);
        dJointGroupEmpty(cgroup);
    }
}

static void place(double x, double y, double z) {
    /* torso to (x, y, z) with a pure yaw, others rigidly, velocities zeroed */
    dMatrix3 Rn; yaw_R(Rn);
    const dReal *p0 = dBodyGetPosition(bodies[0]), *R0 = dBodyGetRotation(bodies[0]);
    double P0[3] = {p0[0], p0[1], p0[2]}; dMatrix3 R0c; memcpy(R0c, R0, sizeof(dMatrix3));
    /* delta = Rn * R0^T */
    double D[3][3];
    for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) {
        D[i][j] = 0; for (int k = 0; k < 3; k++) D[i][j] += Rn[4 * i + k] * R0c[4 * j + k];
    }
    for (int b = 0; b < np; b++) {
        const dReal *p = dBodyGetPosition(bodies[b]), *R = dBodyGetRotation(bodies[b]);
        double rel[3] = {p[0] - P0[0], p[1] - P0[1], p[2] - P0[2]}, np_[3];
        for (int i = 0; i < 3; i++) np_[i] = D[i][0] * rel[0] + D[i][1] * rel[1] + D[i][2] * rel[2];
        dMatrix3 Rb; memset(Rb, 0, sizeof Rb);
        for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) {
            double s = 0; for (int k = 0; k < 3; k++) s += D[i][k] * R[4 * k + j]; Rb[4 * i + j] = s;
        }
        if (b == 0) memcpy(Rb, Rn, sizeof Rb);
        dBodySetPosition(bodies[b], x + np_[0], y + np_[1], z + np_[2]);
        dBodySetRotation(bodies[b], Rb);
        dBodySetLinearVel(bodies[b], 0, 0, 0); dBodySetAngularVel(bodies[b], 0, 0, 0);
        dBodyEnable(bodies[b]);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "replica MODEL SENT [opts]\n"); return 2; }
    int nudge_step = -1, nudge_joint = -1; double nudge_speed = 0, gcfm = 1e-5, gerp = 0.2, shift = 0;
    int adis = 1;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--nudge")) { nudge_step = atoi(argv[++i]); nudge_joint = atoi(argv[++i]); nudge_speed = atof(argv[++i]); }
        else if (!strcmp(argv[i], "--quick")) quick = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mu")) g_mu = atof(argv[++i]);
        else if (!strcmp(argv[i], "--slip")) g_slip = atof(argv[++i]);
        else if (!strcmp(argv[i], "--erp")) g_erp = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cfm")) g_cfm = atof(argv[++i]);
        else if (!strcmp(argv[i], "--gcfm")) gcfm = atof(argv[++i]);
        else if (!strcmp(argv[i], "--gerp")) gerp = atof(argv[++i]);
        else if (!strcmp(argv[i], "--noadis")) adis = 0;
        else if (!strcmp(argv[i], "--torques")) want_torques = 1;
        else if (!strcmp(argv[i], "--exact")) exact_mass = 1;
        else if (!strcmp(argv[i], "--nogyro")) no_gyro = 1;
        else if (!strcmp(argv[i], "--ball-coulomb")) ball_coulomb = 1;
        else if (!strcmp(argv[i], "--ball-hard")) ball_hard = 1;
        else if (!strcmp(argv[i], "--substeps")) substeps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--part-drag")) part_drag = atof(argv[++i]);
        else if (!strcmp(argv[i], "--shift")) shift = atof(argv[++i]);
    }
    load_model(argv[1]);
    load_sent(argv[2]);
    dInitODE2(0);
    world = dWorldCreate();
    dWorldSetGravity(world, 0, 0, -9.81);
    dWorldSetCFM(world, gcfm);
    dWorldSetERP(world, gerp);
    dWorldSetContactSurfaceLayer(world, 0.001);
    if (quick) dWorldSetQuickStepNumIterations(world, quick);
    dWorldSetAutoDisableFlag(world, adis);
    dWorldSetAutoDisableLinearThreshold(world, 0.01);
    dWorldSetAutoDisableAngularThreshold(world, 0.01);
    dWorldSetAutoDisableSteps(world, 10);
    dWorldSetAutoDisableTime(world, 0);
    cgroup = dJointGroupCreate(0);
    dSpaceID top = dHashSpaceCreate(0);
    ground = dCreatePlane(top, 0, 0, 1, 0);
    ball = dBodyCreate(world);
    dMass bm; dMassSetSphereTotal(&bm, 0.026, 0.042); dBodySetMass(ball, &bm);
    dBodySetPosition(ball, 0, 0, 0.042);
    ball_geom = dCreateSphere(top, 0.042); dGeomSetBody(ball_geom, ball);
    dSpaceID rs = dHashSpaceCreate(top);
    build_robot(-14.2, 9.2, 0.4, rs);
    for (int i = 0; i < 10; i++) step();
    place(-5 + shift, 0, 0.4);
    double nudge_prev = 0, nudge_during = 0; int nudged = 0;
    double target[MAXJ] = {0};
    printf("row,torso_x,torso_y,torso_z,r00,r01,r02,r10,r11,r12,r20,r21,r22,ball_x,ball_y,ball_z");
    for (int k = 0; k < nj; k++) printf(",%s", joints[k].eff);
    printf(",ball_vx,ball_vy,ball_vz,ball_wx,ball_wy,ball_wz");
    if (want_torques) {
        for (int k = 0; k < nj; k++) { dJointSetFeedback(hinges[k], &feedback[k]); printf(",tq_%s", joints[k].eff); }
    }
    printf("\n");
    for (int s = 0; s < nsteps; s++) {
        for (int c = 0; c < ncmds[s]; c++) {
            int j = cmds[s][c].j; double v = cmds[s][c].v, vm = joints[j].vmax;
            if (v > vm) v = vm;
            if (v < -vm) v = -vm;
            target[j] = v;
            dJointSetHingeParam(hinges[j], dParamVel, v);
            if (v != 0) dBodyEnable(bodies[joints[j].child]);
        }
        if (s == nudge_step) {
            nudge_prev = target[nudge_joint]; target[nudge_joint] += nudge_speed; nudge_during = target[nudge_joint];
            dJointSetHingeParam(hinges[nudge_joint], dParamVel, target[nudge_joint]); nudged = 1;
            dBodyEnable(bodies[joints[nudge_joint].child]);
        } else if (nudged) {
            nudged = 0;
            if (target[nudge_joint] == nudge_during) { target[nudge_joint] = nudge_prev; dJointSetHingeParam(hinges[nudge_joint], dParamVel, nudge_prev); }
        }
        if (ball_set[s]) {
            dBodySetPosition(ball, ball_pos[s][0] + shift, ball_pos[s][1], ball_pos[s][2]);
            dBodySetLinearVel(ball, 0, 0, 0); dBodySetAngularVel(ball, 0, 0, 0); dBodyEnable(ball);
        }
        step();
        const dReal *p = dBodyGetPosition(bodies[0]), *R = dBodyGetRotation(bodies[0]), *bp = dBodyGetPosition(ball);
        printf("%d,%.6f,%.6f,%.6f", s + 1, p[0] - shift, p[1], p[2]);
        for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) printf(",%.6f", R[4 * i + j]);
        printf(",%.6f,%.6f,%.6f", bp[0] - shift, bp[1], bp[2]);
        for (int k = 0; k < nj; k++) printf(",%.4f", dJointGetHingeAngle(hinges[k]) * 180 / M_PI);
        const dReal *bv = dBodyGetLinearVel(ball), *bw = dBodyGetAngularVel(ball);
        printf(",%.4f,%.4f,%.4f,%.3f,%.3f,%.3f", bv[0], bv[1], bv[2], bw[0], bw[1], bw[2]);
        for (int k = 0; want_torques && k < nj; k++) {
            /* torque on the child about the anchor, along the axis */
            dVector3 an, ax; dJointGetHingeAnchor(hinges[k], an); dJointGetHingeAxis(hinges[k], ax);
            const dReal *c = dBodyGetPosition(bodies[joints[k].child]);
            const dReal *f = feedback[k].f1, *t = feedback[k].t1;
            double r[3] = {an[0] - c[0], an[1] - c[1], an[2] - c[2]};
            double ta[3] = {t[0] - (r[1] * f[2] - r[2] * f[1]), t[1] - (r[2] * f[0] - r[0] * f[2]), t[2] - (r[0] * f[1] - r[1] * f[0])};
            printf(",%.3f", ta[0] * ax[0] + ta[1] * ax[1] + ta[2] * ax[2]);
        }
        printf("\n");
    }
    return 0;
}
