"""A tf.estimator job on synthetic data: 80 steps (then on to 100), logged every 5, a checkpoint every 20
(each followed by an evaluation of 4 batches), step 53's batch made slow (1.5 s)."""
import sys
import time

import numpy as np
import tensorflow as tf

tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
MODEL_DIR, MAX_STEPS = sys.argv[1], int(sys.argv[2])
SLOW_STEP = 53


def slow_batch(step):
    if int(step) == SLOW_STEP:
        time.sleep(1.5)
    return step


def delay(i, xy):
    return tf.py_function(slow_batch, [i], tf.int64), xy


def drop_index(i, xy):
    return xy


def input_fn(training):
    def fn():
        rng = np.random.default_rng(0)
        x = rng.normal(size=(4096, 16)).astype("float32")
        y = (x.sum(axis=1) > 0).astype("int32")
        ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(32).repeat()
        if training:
            ds = ds.enumerate(start=1).map(delay).map(drop_index)
        return ds.prefetch(0)
    return fn


def model_fn(features, labels, mode):
    hidden = tf.compat.v1.layers.dense(features["x"], 64, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(hidden, 2)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        acc = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": acc})
    opt = tf.compat.v1.train.AdamOptimizer(1e-3)
    train_op = opt.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


config = tf.estimator.RunConfig(model_dir=MODEL_DIR, log_step_count_steps=5, save_checkpoints_steps=20,
                                save_summary_steps=10, keep_checkpoint_max=2)
est = tf.estimator.Estimator(model_fn, config=config)
tf.estimator.train_and_evaluate(
    est, tf.estimator.TrainSpec(input_fn(True), max_steps=MAX_STEPS),
    tf.estimator.EvalSpec(input_fn(False), steps=4, throttle_secs=0, start_delay_secs=0))
