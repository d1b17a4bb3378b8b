"""judge_calls: every call of an LLM judge, its reply, outcome, tokens, latency and cost

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'judge_calls',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('unit_id', sa.Integer(), sa.ForeignKey('units.id'), nullable=False),
        sa.Column('worker_id', sa.Integer(), sa.ForeignKey('workers.id'), nullable=False),
        sa.Column('dialogue_key', sa.String(length=64), nullable=False),
        sa.Column('bucket', sa.String(length=200), nullable=False),
        sa.Column('outcome', sa.String(length=16), nullable=False),
        sa.Column('answer', sa.JSON(), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('reply', sa.Text(), nullable=True),
        sa.Column('prompt_sha256', sa.String(length=64), nullable=False),
        sa.Column('settings', sa.JSON(), nullable=False),
        sa.Column('schema_used', sa.Boolean(), nullable=False),
        sa.Column('input_tokens', sa.Integer(), nullable=True),
        sa.Column('output_tokens', sa.Integer(), nullable=True),
        sa.Column('cost', sa.Float(), nullable=True),
        sa.Column('latency_ms', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_judge_calls_unit_id', 'judge_calls', ['unit_id'])
    op.create_index('ix_judge_calls_worker_id', 'judge_calls', ['worker_id'])
    op.create_index('ix_judge_calls_answer', 'judge_calls', ['unit_id', 'dialogue_key', 'bucket'],
                    unique=True, postgresql_where=sa.text("outcome = 'answer'"),
                    sqlite_where=sa.text("outcome = 'answer'"))


def downgrade() -> None:
    op.drop_table('judge_calls')
