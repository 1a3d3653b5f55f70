"""crash.py run under torch's `@record`: the failed rank writes its traceback to an error file,
and torchrun's report prints it under the root cause."""
import runpy
from pathlib import Path

from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    runpy.run_path(str(Path(__file__).with_name("crash.py")), run_name="__main__")


if __name__ == "__main__":
    main()
