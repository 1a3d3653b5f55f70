"""A tiny flax.linen MLP training run on the CPU, to capture what CLU's
metric writers print: `clu.metric_writers` LoggingWriter lines such as
`I1130 12:00:00.123456 1234 logging_writer.py:48] [10] loss=2.31, ...`, plus
`clu.periodic_actions.ReportProgress` lines (steps/sec, ETA, work unit notes).

It trains a 2-layer MLP on random data with optax for 30 steps, writes
loss / learning_rate / steps_per_sec every step, and eval_loss /
eval_accuracy every 10 steps (an "evaluation"). Step 17 is made slow on
purpose (time.sleep(0.5)).

Usage:
  python clu_fit.py > OUT 2>&1          # absl logs to stderr
  python clu_fit.py --writer=sync > OUT 2>&1  # plain LoggingWriter
  python clu_fit.py --steps=30 --slow_step=17 > OUT 2>&1
"""
import time

from absl import app, flags, logging
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax
from clu import metric_writers, periodic_actions

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 30, "Number of training steps.")
flags.DEFINE_integer("slow_step", 17, "Step that sleeps 0.5 s.")
flags.DEFINE_integer("eval_every", 10, "Evaluate every N steps.")
flags.DEFINE_string("logdir", "/tmp/cap-jax/clu-logdir", "Work dir.")
flags.DEFINE_enum("writer", "default", ["default", "sync"],
                  "default: metric_writers.create_default_writer(logdir, "
                  "just_logging=True) (an AsyncWriter around LoggingWriter, "
                  "as CLU trainers use); sync: a plain LoggingWriter().")


class MLP(nn.Module):
  @nn.compact
  def __call__(self, x):
    x = nn.relu(nn.Dense(32)(x))
    return nn.Dense(10)(x)


def main(argv):
  del argv
  logging.info("JAX devices: %s", jax.devices())
  rng = jax.random.PRNGKey(0)
  kx, ky, kp, kex, key = jax.random.split(rng, 5)
  x = jax.random.normal(kx, (64, 16))
  y = jax.random.randint(ky, (64,), 0, 10)
  ex = jax.random.normal(kex, (64, 16))
  ey = jax.random.randint(key, (64,), 0, 10)

  model = MLP()
  params = model.init(kp, x)
  schedule = optax.linear_schedule(1e-3, 1e-4, FLAGS.steps)
  tx = optax.adam(schedule)
  opt_state = tx.init(params)

  def loss_fn(p, xb, yb):
    logits = model.apply(p, xb)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean()
    return loss, logits

  @jax.jit
  def train_step(p, s, xb, yb):
    (loss, _), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, xb, yb)
    updates, s = tx.update(grads, s, p)
    return optax.apply_updates(p, updates), s, loss

  @jax.jit
  def eval_step(p, xb, yb):
    loss, logits = loss_fn(p, xb, yb)
    return loss, (logits.argmax(-1) == yb).mean()

  if FLAGS.writer == "sync":
    writer = metric_writers.LoggingWriter()
  else:
    writer = metric_writers.create_default_writer(FLAGS.logdir,
                                                  just_logging=True)
  writer.write_hparams({"learning_rate": 1e-3, "batch_size": 64,
                        "num_train_steps": FLAGS.steps})
  report_progress = periodic_actions.ReportProgress(
      num_train_steps=FLAGS.steps, writer=writer, every_steps=5)

  last = time.time()
  for step in range(1, FLAGS.steps + 1):
    params, opt_state, loss = train_step(params, opt_state, x, y)
    loss = float(loss)
    if step == FLAGS.slow_step:
      time.sleep(0.5)  # deliberately slow step
    now = time.time()
    writer.write_scalars(step, {"loss": loss,
                                "learning_rate": float(schedule(step)),
                                "steps_per_sec": 1.0 / (now - last)})
    last = now
    report_progress(step)
    if step % FLAGS.eval_every == 0:
      eloss, eacc = eval_step(params, ex, ey)
      writer.write_scalars(step, {"eval_loss": float(eloss),
                                  "eval_accuracy": float(eacc)})
  writer.flush()
  logging.info("Finished training at step %d.", FLAGS.steps)


if __name__ == "__main__":
  app.run(main)
