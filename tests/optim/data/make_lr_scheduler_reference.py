# Prints the learning-rate (and momentum) sequences of PyTorch 1.13's schedulers
# that tests/optim/test_lr_scheduler.cpp pastes as literals. Needs PyTorch; the
# test suite itself does not. Usage: make_lr_scheduler_reference.py [out.inc]
import math, warnings, sys, re
import torch
from torch.optim import lr_scheduler as L
warnings.simplefilter("ignore")

def make_opt(kind, lrs, initial=None):
    groups = []
    for i, lr in enumerate(lrs):
        g = {'params': [torch.zeros(1, requires_grad=True)], 'lr': lr}
        if initial is not None: g['initial_lr'] = initial[i]
        groups.append(g)
    if kind == 'kPlain': return torch.optim.SGD(groups, lr=lrs[0])
    if kind == 'kMomentum': return torch.optim.SGD(groups, lr=lrs[0], momentum=0.9)
    if kind == 'kBetas': return torch.optim.Adam(groups, lr=lrs[0])

def momenta(opt):
    out = []
    for g in opt.param_groups:
        out.append(g['betas'][0] if 'betas' in g else g['momentum'])
    return out

def fmt_row(vals, indent):
    parts = [repr(float(v)) for v in vals]
    lines, cur = [], indent
    for p in parts:
        if len(cur) + len(p) + 2 > 118 and cur.strip():
            lines.append(cur.rstrip()); cur = indent
        cur += p + ", "
    lines.append(cur.rstrip().rstrip(','))
    return "\n".join(lines)


def wrap_cpp(expr, first_indent, cont_indent, width=118):
    # break points: after ", " and before ".name(" (outside string literals)
    pieces, cur, in_str, i = [], "", False, 0
    while i < len(expr):
        ch = expr[i]
        cur += ch
        if ch == '"': in_str = not in_str
        if not in_str:
            if expr[i:i+2] == ", ":
                cur += " "; i += 2; pieces.append(cur); cur = ""; continue
            if i + 1 < len(expr) and expr[i+1] == "." and re.match(r"\.[a-z_0-9]+\(", expr[i+1:]) and ch == ")":
                pieces.append(cur); cur = ""
        i += 1
    if cur: pieces.append(cur)
    lines, line = [], first_indent
    for p in pieces:
        if len(line) + len(p.rstrip()) > width and line.strip():
            lines.append(line.rstrip()); line = cont_indent
        line += p
    lines.append(line.rstrip())
    return "\n".join(lines)

def wrap_str(text, indent, width=118):
    words = re.split(r"(?<=, )", text)
    lines, line = [], ""
    for w in words:
        if len(indent) + len(line) + len(w) + 3 > width and line:
            lines.append(line); line = ""
        line += w
    lines.append(line)
    return "\n".join(indent + '"' + l.replace('"', '\\"') + '"' for l in lines)

def seqs(rows):  # rows: list over steps of list over groups -> list over groups
    return [[r[g] for r in rows] for g in range(len(rows[0]))]

def emit_group_list(per_group, ind):
    if not per_group: return "{}"
    s = "{\n"
    for vals in per_group:
        s += ind + "{\n" + fmt_row(vals, ind + "  ") + "},\n"
    return s + ind[:-2] + "}"

# (python expression with `opt`, optimizer kind, group lrs, initial_lrs, C++ factory body, record momenta)
CASES = [
 ("StepLR(opt, step_size=7, gamma=0.5)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::StepLR>(opt, 7, 0.5)", False),
 ("StepLR(opt, step_size=30)", 'kPlain', [0.1], None,
  "std::make_unique<optim::StepLR>(opt, 30)", False),
 ("MultiStepLR(opt, milestones=[60, 10, 25, 25], gamma=0.5)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::MultiStepLR>(opt, std::vector<int64_t>{60, 10, 25, 25}, 0.5)", False),
 ("ConstantLR(opt)", 'kPlain', [0.1], None,
  "std::make_unique<optim::ConstantLR>(opt)", False),
 ("ConstantLR(opt, factor=0.3, total_iters=20)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::ConstantLR>(opt, 0.3, 20)", False),
 ("LinearLR(opt)", 'kPlain', [0.1], None,
  "std::make_unique<optim::LinearLR>(opt)", False),
 ("LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=40)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::LinearLR>(opt, 0.25, 1.0, 40)", False),
 ("LinearLR(opt, start_factor=1.0, end_factor=0.1, total_iters=30)", 'kPlain', [0.1], None,
  "std::make_unique<optim::LinearLR>(opt, 1.0, 0.1, 30)", False),
 ("ExponentialLR(opt, gamma=0.95)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::ExponentialLR>(opt, 0.95)", False),
 ("PolynomialLR(opt)", 'kPlain', [0.1], None,
  "std::make_unique<optim::PolynomialLR>(opt)", False),
 ("PolynomialLR(opt, total_iters=60, power=2.0)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::PolynomialLR>(opt, 60, 2.0)", False),
 ("PolynomialLR(opt, total_iters=30, power=0.5)", 'kPlain', [0.1], None,
  "std::make_unique<optim::PolynomialLR>(opt, 30, 0.5)", False),
 ("CosineAnnealingLR(opt, T_max=100)", 'kPlain', [0.1], None,
  "std::make_unique<optim::CosineAnnealingLR>(opt, 100)", False),
 ("CosineAnnealingLR(opt, T_max=30, eta_min=0.001)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::CosineAnnealingLR>(opt, 30, 0.001)", False),
 ("CosineAnnealingWarmRestarts(opt, T_0=10)", 'kPlain', [0.1], None,
  "std::make_unique<optim::CosineAnnealingWarmRestarts>(opt, 10)", False),
 ("CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2, eta_min=0.01)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::CosineAnnealingWarmRestarts>(opt, 5, 2, 0.01)", False),
 ("LambdaLR(opt, lambda e: 0.95 ** e)", 'kPlain', [0.1], None,
  "std::make_unique<optim::LambdaLR>(opt, [](int64_t e) { return std::pow(0.95, static_cast<double>(e)); })", False),
 ("LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.9 ** (e // 10)])", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::LambdaLR>(opt, std::vector<optim::LRLambda>{[](int64_t e) { return 1.0 / static_cast<double>(e + 1); }, [](int64_t e) { return std::pow(0.9, static_cast<double>(e / 10)); }})", False),
 ("MultiplicativeLR(opt, lambda e: 0.97)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::MultiplicativeLR>(opt, [](int64_t) { return 0.97; })", False),
 ("MultiplicativeLR(opt, [lambda e: 0.99, lambda e: 1.0 if e % 10 else 0.5])", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::MultiplicativeLR>(opt, std::vector<optim::LRLambda>{[](int64_t) { return 0.99; }, [](int64_t e) { return e % 10 ? 1.0 : 0.5; }})", False),
 ("OneCycleLR(opt, max_lr=0.5, total_steps=100)  # SGD momentum 0.9", 'kMomentum', [0.1], None,
  "std::make_unique<optim::OneCycleLR>(opt, optim::OneCycleLROptions(0.5).total_steps(100))", True),
 ("OneCycleLR(opt, max_lr=[0.5, 0.2], total_steps=100, pct_start=0.25, anneal_strategy='linear', three_phase=True, div_factor=10.0, final_div_factor=100.0, base_momentum=0.8, max_momentum=[0.9, 0.95])  # Adam",
  'kBetas', [0.1, 0.05], None,
  "std::make_unique<optim::OneCycleLR>(opt, optim::OneCycleLROptions({0.5, 0.2}).total_steps(100).pct_start(0.25).anneal_strategy(\"linear\").three_phase(true).div_factor(10.0).final_div_factor(100.0).base_momentum(0.8).max_momentum({0.9, 0.95}))", True),
 ("OneCycleLR(opt, max_lr=0.3, total_steps=100, three_phase=True)  # SGD momentum 0.9", 'kMomentum', [0.1], None,
  "std::make_unique<optim::OneCycleLR>(opt, optim::OneCycleLROptions(0.3).total_steps(100).three_phase(true))", True),
 ("OneCycleLR(opt, max_lr=0.2, epochs=4, steps_per_epoch=25, pct_start=0.4, cycle_momentum=False)", 'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::OneCycleLR>(opt, optim::OneCycleLROptions(0.2).epochs(4).steps_per_epoch(25).pct_start(0.4).cycle_momentum(false))", False),
 ("CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=10)  # SGD momentum 0.9", 'kMomentum', [0.1], None,
  "std::make_unique<optim::CyclicLR>(opt, optim::CyclicLROptions(0.01, 0.1).step_size_up(10))", True),
 ("CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=[0.1, 0.05], step_size_up=8, step_size_down=12, mode='triangular2', base_momentum=[0.8, 0.85], max_momentum=0.95)  # SGD momentum 0.9",
  'kMomentum', [0.1, 0.05], None,
  "std::make_unique<optim::CyclicLR>(opt, optim::CyclicLROptions({0.01, 0.02}, {0.1, 0.05}).step_size_up(8).step_size_down(12).mode(\"triangular2\").base_momentum({0.8, 0.85}).max_momentum(0.95))", True),
 ("CyclicLR(opt, base_lr=0.001, max_lr=0.1, step_size_up=15, mode='exp_range', gamma=0.97)  # SGD momentum 0.9", 'kMomentum', [0.1], None,
  "std::make_unique<optim::CyclicLR>(opt, optim::CyclicLROptions(0.001, 0.1).step_size_up(15).mode(\"exp_range\").gamma(0.97))", True),
 ("CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=7, scale_fn=lambda x: 0.5 * (1 + math.sin(x * math.pi / 2)), cycle_momentum=False)",
  'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::CyclicLR>(opt, optim::CyclicLROptions(0.01, 0.1).step_size_up(7).scale_fn([](double x) { return 0.5 * (1 + std::sin(x * std::numbers::pi / 2)); }).cycle_momentum(false))", False),
 ("CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=6, step_size_down=4, scale_fn=lambda x: 1 / (1 + 0.01 * x), scale_mode='iterations')  # SGD momentum 0.9",
  'kMomentum', [0.1], None,
  "std::make_unique<optim::CyclicLR>(opt, optim::CyclicLROptions(0.01, 0.1).step_size_up(6).step_size_down(4).scale_fn([](double x) { return 1 / (1 + 0.01 * x); }).scale_mode(\"iterations\"))", True),
 ("SequentialLR(opt, [LinearLR(opt, start_factor=0.1, total_iters=10), CosineAnnealingLR(opt, T_max=90)], milestones=[10])",
  'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::SequentialLR>(opt, Schedulers{std::make_shared<optim::LinearLR>(opt, 0.1, 1.0, 10), std::make_shared<optim::CosineAnnealingLR>(opt, 90)}, std::vector<int64_t>{10})", False),
 ("SequentialLR(opt, [ConstantLR(opt, factor=0.5, total_iters=5), ExponentialLR(opt, gamma=0.9), StepLR(opt, step_size=10, gamma=0.5)], milestones=[20, 50])",
  'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::SequentialLR>(opt, Schedulers{std::make_shared<optim::ConstantLR>(opt, 0.5, 5), std::make_shared<optim::ExponentialLR>(opt, 0.9), std::make_shared<optim::StepLR>(opt, 10, 0.5)}, std::vector<int64_t>{20, 50})", False),
 ("SequentialLR(opt, [ExponentialLR(opt, gamma=0.9), CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2, eta_min=0.001), LambdaLR(opt, lambda e: 1 / (e + 1))], milestones=[15, 60])",
  'kPlain', [0.1], None,
  "std::make_unique<optim::SequentialLR>(opt, Schedulers{std::make_shared<optim::ExponentialLR>(opt, 0.9), std::make_shared<optim::CosineAnnealingWarmRestarts>(opt, 10, 2, 0.001), std::make_shared<optim::LambdaLR>(opt, [](int64_t e) { return 1.0 / static_cast<double>(e + 1); })}, std::vector<int64_t>{15, 60})", False),
 ("ChainedScheduler([ConstantLR(opt, factor=0.1, total_iters=2), ExponentialLR(opt, gamma=0.9)])",
  'kPlain', [0.1, 0.05], None,
  "std::make_unique<optim::ChainedScheduler>(Schedulers{std::make_shared<optim::ConstantLR>(opt, 0.1, 2), std::make_shared<optim::ExponentialLR>(opt, 0.9)})", False),
 ("ChainedScheduler([LinearLR(opt, start_factor=0.5, total_iters=20), MultiStepLR(opt, milestones=[30, 70], gamma=0.3), CosineAnnealingLR(opt, T_max=25, eta_min=0.0)])",
  'kPlain', [0.1], None,
  "std::make_unique<optim::ChainedScheduler>(Schedulers{std::make_shared<optim::LinearLR>(opt, 0.5, 1.0, 20), std::make_shared<optim::MultiStepLR>(opt, std::vector<int64_t>{30, 70}, 0.3), std::make_shared<optim::CosineAnnealingLR>(opt, 25, 0.0)})", False),
 # Resuming: the groups hold initial_lr, the lr is where an earlier run left it.
 ("StepLR(opt, step_size=10, gamma=0.5, last_epoch=14)  # groups: lr 0.05, initial_lr 0.1", 'kPlain', [0.05], [0.1],
  "std::make_unique<optim::StepLR>(opt, 10, 0.5, 14)", False),
 ("CosineAnnealingLR(opt, T_max=50, eta_min=0.001, last_epoch=20)  # groups: lr 0.07, 0.03; initial_lr 0.1, 0.05", 'kPlain', [0.07, 0.03], [0.1, 0.05],
  "std::make_unique<optim::CosineAnnealingLR>(opt, 50, 0.001, 20)", False),
 ("CosineAnnealingWarmRestarts(opt, T_0=8, T_mult=3, last_epoch=5)  # groups: lr 0.07, initial_lr 0.1", 'kPlain', [0.07], [0.1],
  "std::make_unique<optim::CosineAnnealingWarmRestarts>(opt, 8, 3, 0.0, 5)", False),
]

def pyctor(expr):
    expr = expr.split("  #")[0]
    return lambda opt: eval(expr, {**L.__dict__, 'math': math, 'opt': opt})

out = []
out.append("// ---- generated: schedule cases ----")
for expr, kind, lrs, initial, cpp, mom in CASES:
    opt = make_opt(kind, lrs, initial)
    sched = pyctor(expr)(opt)
    lr_rows = [sched.get_last_lr()]
    mom_rows = [momenta(opt)]
    for _ in range(100):
        opt.step(); sched.step()
        lr_rows.append(sched.get_last_lr()); mom_rows.append(momenta(opt))
    ind = "     "
    init = "{" + ", ".join(repr(x) for x in initial) + "}" if initial else "{}"
    s = "    {" + wrap_str(expr, "     ").lstrip() + ",\n"
    s += f"     {kind}, {{{', '.join(repr(x) for x in lrs)}}}, {init},\n"
    s += "     [](Optimizer& opt) -> std::unique_ptr<LRScheduler> {\n"
    s += wrap_cpp("return " + cpp + ";", "       ", "           ") + "\n     },\n"
    s += "     " + emit_group_list(seqs(lr_rows), "       ") + ",\n"
    s += "     " + (emit_group_list(seqs(mom_rows), "       ") if mom else "{}") + "},"
    out.append(s)

# Closed forms: 10 steps, step(37), 5 steps.
JUMPS = [
 ("StepLR(opt, step_size=7, gamma=0.5)", "std::make_unique<optim::StepLR>(opt, 7, 0.5)"),
 ("MultiStepLR(opt, milestones=[60, 10, 25, 25], gamma=0.5)", "std::make_unique<optim::MultiStepLR>(opt, std::vector<int64_t>{60, 10, 25, 25}, 0.5)"),
 ("ConstantLR(opt, factor=0.3, total_iters=20)", "std::make_unique<optim::ConstantLR>(opt, 0.3, 20)"),
 ("ConstantLR(opt, factor=0.3, total_iters=40)", "std::make_unique<optim::ConstantLR>(opt, 0.3, 40)"),
 ("LinearLR(opt, start_factor=0.25, total_iters=40)", "std::make_unique<optim::LinearLR>(opt, 0.25, 1.0, 40)"),
 ("ExponentialLR(opt, gamma=0.95)", "std::make_unique<optim::ExponentialLR>(opt, 0.95)"),
 ("PolynomialLR(opt, total_iters=60, power=2.0)", "std::make_unique<optim::PolynomialLR>(opt, 60, 2.0)"),
 ("CosineAnnealingLR(opt, T_max=30, eta_min=0.001)", "std::make_unique<optim::CosineAnnealingLR>(opt, 30, 0.001)"),
 ("CosineAnnealingWarmRestarts(opt, T_0=10)", "std::make_unique<optim::CosineAnnealingWarmRestarts>(opt, 10)"),
 ("CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2, eta_min=0.01)", "std::make_unique<optim::CosineAnnealingWarmRestarts>(opt, 5, 2, 0.01)"),
 ("LambdaLR(opt, lambda e: 0.95 ** e)", "std::make_unique<optim::LambdaLR>(opt, [](int64_t e) { return std::pow(0.95, static_cast<double>(e)); })"),
 ("MultiplicativeLR(opt, lambda e: 0.97)", "std::make_unique<optim::MultiplicativeLR>(opt, [](int64_t) { return 0.97; })"),
]
out.append("// ---- generated: jump cases ----")
for expr, cpp in JUMPS:
    opt = make_opt('kPlain', [0.1, 0.05])
    sched = pyctor(expr)(opt)
    rows = []
    for _ in range(10): opt.step(); sched.step(); rows.append(sched.get_last_lr())
    opt.step(); sched.step(37); rows.append(sched.get_last_lr())
    for _ in range(5): opt.step(); sched.step(); rows.append(sched.get_last_lr())
    s = "    {" + wrap_str(expr, "     ").lstrip() + ",\n"
    s += "     [](Optimizer& opt) -> std::unique_ptr<LRScheduler> {\n"
    s += wrap_cpp("return " + cpp + ";", "       ", "           ") + "\n     },\n"
    s += "     " + emit_group_list(seqs(rows), "       ") + "},"
    out.append(s)

def metric(k):
    return 10.0 / (1 + min(k, 12)) + 0.01 * ((k * 37) % 11)

PLATEAU = [
 ("ReduceLROnPlateau(opt)", [0.1, 0.05], "optim::ReduceLROnPlateauOptions()"),
 ("ReduceLROnPlateau(opt, mode='max', factor=0.5, patience=3, threshold=0.05, threshold_mode='abs', cooldown=4, min_lr=[0.01, 0.002])",
  [0.1, 0.05], "optim::ReduceLROnPlateauOptions().mode(\"max\").factor(0.5).patience(3).threshold(0.05).threshold_mode(\"abs\").cooldown(4).min_lr({0.01, 0.002})"),
 ("ReduceLROnPlateau(opt, factor=0.7, patience=2, threshold=0.001, threshold_mode='abs', min_lr=0.02, eps=0.001)",
  [0.1], "optim::ReduceLROnPlateauOptions().factor(0.7).patience(2).threshold(0.001).threshold_mode(\"abs\").min_lr(0.02).eps(0.001)"),
 ("ReduceLROnPlateau(opt, mode='max', factor=0.8, patience=0, threshold=0.01, cooldown=2)",
  [0.1, 0.05], "optim::ReduceLROnPlateauOptions().mode(\"max\").factor(0.8).patience(0).threshold(0.01).cooldown(2)"),
 ("ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=3, eps=1e-3)",
  [0.1], "optim::ReduceLROnPlateauOptions().factor(0.5).patience(1).cooldown(3).eps(1e-3)"),
]
out.append("// ---- generated: plateau cases ----")
for expr, lrs, cpp in PLATEAU:
    opt = make_opt('kPlain', lrs)
    sched = eval(expr, {**L.__dict__, 'opt': opt})
    rows = []
    for k in range(100):
        opt.step(); sched.step(metric(k)); rows.append(sched._last_lr)
    s = "    {" + wrap_str(expr, "     ").lstrip() + ",\n"
    s += f"     {{{', '.join(repr(x) for x in lrs)}}},\n"
    s += wrap_cpp(cpp + ",", "     ", "         ") + "\n"
    s += "     " + emit_group_list(seqs(rows), "       ") + "},"
    out.append(s)

open(sys.argv[1] if len(sys.argv) > 1 else "generated.inc", "w").write("\n".join(out) + "\n")
print("ok", len(out))
