"""drafts per unit and worker, unit pool and layout, run heartbeat, content-keyed and retirable
assignments

Revision ID: 0002
Revises: 0001
"""

import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def _content_key(data: dict) -> str:
    """The key 0002 gives an assignment: a hash of its dialogues as the data file has them
    (frozen here; the blueprint computes the same for new plans)."""
    sources = [d["source"] for d in data.get("dialogues", [])]
    return hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()[:32]


def _rebuild_drafts(primary_key: list[str]) -> None:
    """A new primary key means a new table on SQLite; do it the same way on both databases."""
    op.create_table('drafts_new',
    sa.Column('unit_id', sa.Integer(), nullable=False),
    sa.Column('worker_id', sa.Integer(), nullable=False),
    sa.Column('answers', sa.JSON(), nullable=False),
    sa.Column('position', sa.JSON(), nullable=True),
    sa.Column('saved_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['unit_id'], ['units.id'], ),
    sa.ForeignKeyConstraint(['worker_id'], ['workers.id'], ),
    sa.PrimaryKeyConstraint(*primary_key)
    )
    op.execute('INSERT INTO drafts_new (unit_id, worker_id, answers, position, saved_at) '
               'SELECT unit_id, worker_id, answers, position, saved_at FROM drafts')
    op.drop_table('drafts')
    op.rename_table('drafts_new', 'drafts')


def upgrade() -> None:
    with op.batch_alter_table('task_runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('server', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('heartbeat_at', sa.DateTime(), nullable=True))

    with op.batch_alter_table('assignments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('retired_at', sa.DateTime(), nullable=True))

    with op.batch_alter_table('units', schema=None) as batch_op:
        batch_op.add_column(sa.Column('pool', sa.String(length=16), nullable=False,
                                      server_default='main'))
        batch_op.add_column(sa.Column('layout', sa.JSON(), nullable=True))
        batch_op.drop_index('ix_units_run_status')
        batch_op.create_index('ix_units_free', ['task_run_id', 'pool', 'id'], unique=False,
                              postgresql_where=sa.text("status = 'launched'"),
                              sqlite_where=sa.text("status = 'launched'"))
    if op.get_bind().dialect.name == 'postgresql':
        # Claims change the share of free units quickly: refresh the planner's view sooner.
        op.execute('ALTER TABLE units SET (autovacuum_analyze_scale_factor = 0.02)')

    _rebuild_drafts(['unit_id', 'worker_id'])

    # Assignments were keyed by their ids; now by their content, so edited text is new work.
    bind = op.get_bind()
    assignments = sa.table('assignments', sa.column('id', sa.Integer),
                           sa.column('key', sa.String), sa.column('data', sa.JSON))
    rows = bind.execute(sa.select(assignments.c.id, assignments.c.data)).all()
    for assignment_id, data in rows:
        bind.execute(assignments.update().where(assignments.c.id == assignment_id)
                     .values(key=_content_key(data)))


def downgrade() -> None:
    _rebuild_drafts(['unit_id'])
    with op.batch_alter_table('units', schema=None) as batch_op:
        batch_op.drop_index('ix_units_free')
        batch_op.create_index('ix_units_run_status', ['task_run_id', 'status'], unique=False)
        batch_op.drop_column('layout')
        batch_op.drop_column('pool')
    with op.batch_alter_table('assignments', schema=None) as batch_op:
        batch_op.drop_column('retired_at')
    with op.batch_alter_table('task_runs', schema=None) as batch_op:
        batch_op.drop_column('heartbeat_at')
        batch_op.drop_column('server')
