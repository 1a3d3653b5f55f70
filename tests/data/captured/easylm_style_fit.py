"""A JAX training loop that logs as EasyLM and the other trainers built on mlxu do: a tqdm bar
drawn with no cells over all steps (`trange(start_step, total_steps, ncols=0)`), and every
`log_freq` steps the metrics, fetched from the device, as
`tqdm.write("\\n" + pprint.pformat(log_metrics) + "\\n")`, which pprint spreads over one line
an item.  A linear model, 12 steps of ~0.1 s, the 7th 0.5 s; logged every 3 steps."""
import pprint
import time

import jax
import jax.numpy as jnp
from tqdm import tqdm, trange

TOTAL_STEPS, LOG_FREQ, LR = 12, 3, 0.1
key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (64, 8))
y = x @ jnp.arange(1.0, 9.0)
params = {"w": jnp.zeros(8)}


def loss_fn(params):
    return jnp.mean((x @ params["w"] - y) ** 2)


@jax.jit
def train_step(params):
    loss, grads = jax.value_and_grad(loss_fn)(params)
    params = jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
    metrics = {"loss": loss, "learning_rate": jnp.float32(LR),
               "gradient_norm": jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree_util.tree_leaves(grads))),
               "param_norm": jnp.sqrt(sum(jnp.sum(p ** 2) for p in jax.tree_util.tree_leaves(params)))}
    return params, metrics


step_counter = trange(0, TOTAL_STEPS, ncols=0)
for step in step_counter:
    params, metrics = train_step(params)
    time.sleep(0.5 if step == 6 else 0.1)
    if step % LOG_FREQ == 0:
        log_metrics = {"step": step}
        log_metrics.update(metrics)
        log_metrics = jax.device_get(log_metrics)
        tqdm.write("\n" + pprint.pformat(log_metrics) + "\n")
