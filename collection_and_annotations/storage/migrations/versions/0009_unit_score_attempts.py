"""unit_scores per unit and attempt: a training unit served again starts without the checks
of its earlier worker, whose attempt is kept

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None

_COLUMNS = "unit_id, worker_id, task_id, pool, checks, mistakes, passed, scored_at"


def _rebuild(primary_key: list[str], attempt: str | None) -> None:
    """A new primary key means a new table on SQLite; do it the same way on both databases.
    `attempt`: the SQL of the new `attempt` column (None: the table drops it)."""
    columns = [
        sa.Column('unit_id', sa.Integer(), nullable=False),
        sa.Column('worker_id', sa.Integer(), nullable=False),
        sa.Column('task_id', sa.Integer(), nullable=False),
        sa.Column('pool', sa.String(length=16), nullable=False),
        sa.Column('checks', sa.JSON(), nullable=False),
        sa.Column('mistakes', sa.Integer(), nullable=True),
        sa.Column('passed', sa.Boolean(), nullable=True),
        sa.Column('scored_at', sa.DateTime(), nullable=True),
    ]
    if attempt is not None:
        columns.insert(1, sa.Column('attempt', sa.Integer(), nullable=False))
    op.create_table('unit_scores_new', *columns,
                    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], ),
                    sa.ForeignKeyConstraint(['unit_id'], ['units.id'], ),
                    sa.ForeignKeyConstraint(['worker_id'], ['workers.id'], ),
                    sa.PrimaryKeyConstraint(*primary_key))
    if attempt is None:
        op.execute(f"INSERT INTO unit_scores_new ({_COLUMNS}) SELECT {_COLUMNS} "
                   "FROM unit_scores")
    else:
        op.execute(f"INSERT INTO unit_scores_new (attempt, {_COLUMNS}) SELECT {attempt}, "
                   + ", ".join(f"s.{c}" for c in _COLUMNS.split(", "))
                   + " FROM unit_scores s JOIN units u ON u.id = s.unit_id")
    op.drop_index('ix_unit_scores_task_id', table_name='unit_scores')
    op.drop_index('ix_unit_scores_worker_id', table_name='unit_scores')
    op.drop_table('unit_scores')
    op.rename_table('unit_scores_new', 'unit_scores')
    op.create_index('ix_unit_scores_worker_id', 'unit_scores', ['worker_id'])
    op.create_index('ix_unit_scores_task_id', 'unit_scores', ['task_id'])


def upgrade() -> None:
    # A row is the attempt of the unit's present holder when it is theirs; otherwise it was
    # left by an earlier worker of the unit (their try before it expired).
    _rebuild(['unit_id', 'attempt'], "CASE WHEN u.worker_id = s.worker_id THEN u.times_expired "
                                     "ELSE u.times_expired - 1 END")


def downgrade() -> None:
    # One row per unit again: the latest attempt's.
    op.execute("DELETE FROM unit_scores WHERE attempt < (SELECT max(o.attempt) FROM "
               "unit_scores o WHERE o.unit_id = unit_scores.unit_id)")
    _rebuild(['unit_id'], None)
