from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from policy.decisions import whatif


class Command(BaseCommand):
    help = (
        "Run what-if comparison ID here, as a worker would (the web process starts this for "
        "each comparison when there is no broker); prints its final status."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_id", type=int)

    def handle(self, *args: Any, run_id: int, **options: Any) -> None:
        status = whatif.execute(run_id, worker=f"process {os.getpid()}")
        self.stdout.write(f"what-if {run_id}: {status or 'already claimed or gone'}")
