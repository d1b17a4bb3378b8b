"""battle_votes: the votes of arena battles (two bots side by side)

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'battle_votes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('unit_id', sa.Integer(), sa.ForeignKey('units.id'), nullable=False),
        sa.Column('worker_id', sa.Integer(), sa.ForeignKey('workers.id'), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('turn', sa.Integer(), nullable=False),
        sa.Column('conversation_a', sa.Integer(), sa.ForeignKey('conversations.id'),
                  nullable=False),
        sa.Column('conversation_b', sa.Integer(), sa.ForeignKey('conversations.id'),
                  nullable=False),
        sa.Column('model_a', sa.String(length=200), nullable=False),
        sa.Column('model_b', sa.String(length=200), nullable=False),
        sa.Column('choice', sa.String(length=8), nullable=False),
        sa.Column('winner', sa.String(length=16), nullable=False),
        sa.Column('preferred', sa.String(length=200), nullable=True),
        sa.Column('voted_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('unit_id', 'attempt', 'turn'),
    )
    op.create_index('ix_battle_votes_unit_id', 'battle_votes', ['unit_id'])
    op.create_index('ix_battle_votes_worker_id', 'battle_votes', ['worker_id'])


def downgrade() -> None:
    op.drop_table('battle_votes')
