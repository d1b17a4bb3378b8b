"""unit scores of screening and gold units

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('unit_scores',
    sa.Column('unit_id', sa.Integer(), nullable=False),
    sa.Column('worker_id', sa.Integer(), nullable=False),
    sa.Column('task_id', sa.Integer(), nullable=False),
    sa.Column('pool', sa.String(length=16), nullable=False),
    sa.Column('checks', sa.JSON(), nullable=False),
    sa.Column('mistakes', sa.Integer(), nullable=True),
    sa.Column('passed', sa.Boolean(), nullable=True),
    sa.Column('scored_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], ),
    sa.ForeignKeyConstraint(['unit_id'], ['units.id'], ),
    sa.ForeignKeyConstraint(['worker_id'], ['workers.id'], ),
    sa.PrimaryKeyConstraint('unit_id')
    )
    op.create_index('ix_unit_scores_worker_id', 'unit_scores', ['worker_id'])
    op.create_index('ix_unit_scores_task_id', 'unit_scores', ['task_id'])


def downgrade() -> None:
    op.drop_index('ix_unit_scores_task_id', table_name='unit_scores')
    op.drop_index('ix_unit_scores_worker_id', table_name='unit_scores')
    op.drop_table('unit_scores')
