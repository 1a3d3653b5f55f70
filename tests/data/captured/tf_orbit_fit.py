"""A Model Garden Orbit `Controller` job on synthetic data: N steps in loops of 5, an
evaluation of 4 batches every 20 steps, a checkpoint every 20, step 53's batch made slow (1.5 s)."""
import sys
import time

from absl import app

import numpy as np
import orbit
import tensorflow as tf

SLOW_STEP = 53
WIDE = len(sys.argv) > 3 and sys.argv[3] == "wide"


def slow_batch(step):
    if int(step) == SLOW_STEP:
        time.sleep(1.5)
    return step


def delay(i, xy):
    return tf.py_function(slow_batch, [i], tf.int64), xy


def drop_index(i, xy):
    return xy


def dataset(training, first_step):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4096, 16)).astype("float32")
    y = (x.sum(axis=1) > 0).astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).repeat()
    if training:
        ds = ds.enumerate(start=first_step).map(delay).map(drop_index)
    return ds.prefetch(0)


class Trainer(orbit.StandardTrainer):
    def __init__(self, model, optimizer, first_step):
        self.model, self.optimizer = model, optimizer
        self.loss = tf.keras.metrics.Mean("training_loss")
        super().__init__(dataset(True, first_step))

    def train_loop_begin(self):
        self.loss.reset_states()

    def train_step(self, iterator):
        x, y = next(iterator)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, self.model(x), from_logits=True))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        self.loss.update_state(loss)

    def train_loop_end(self):
        out = {"training_loss": self.loss.result(), "learning_rate": self.optimizer.learning_rate}
        if WIDE:    # the names of Model Garden's tasks: wider than 80 characters, printed over lines
            l2 = tf.add_n([tf.nn.l2_loss(v) for v in self.model.trainable_variables]) * 1e-4
            out.update(model_loss=self.loss.result(), l2_regularization_loss=l2, total_loss=self.loss.result() + l2)
        return out


class Evaluator(orbit.StandardEvaluator):
    def __init__(self, model):
        self.model = model
        self.accuracy = tf.keras.metrics.SparseCategoricalAccuracy("accuracy")
        super().__init__(dataset(False, 0))

    def eval_begin(self):
        self.accuracy.reset_states()

    def eval_step(self, iterator):
        x, y = next(iterator)
        self.accuracy.update_state(y, self.model(x))

    def eval_end(self):
        return {"accuracy": self.accuracy.result()}


def main(argv):
    model_dir, max_steps = argv[1], int(argv[2])       # (and `wide`)
    model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(2)])
    model.build((None, 16))
    optimizer = tf.keras.optimizers.Adam(1e-3)
    global_step = optimizer.iterations
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
    manager = tf.train.CheckpointManager(checkpoint, model_dir, max_to_keep=2, step_counter=global_step,
                                         checkpoint_interval=20)
    controller = orbit.Controller(
        trainer=Trainer(model, optimizer, first_step=1), evaluator=Evaluator(model), global_step=global_step,
        steps_per_loop=5, checkpoint_manager=manager, summary_dir=model_dir + "/summaries")
    controller.train_and_evaluate(train_steps=max_steps, eval_steps=4, eval_interval=20)


if __name__ == "__main__":
    app.run(main)
