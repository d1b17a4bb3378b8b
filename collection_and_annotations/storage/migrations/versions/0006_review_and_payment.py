"""review decisions and bonuses as rows; units verified against the provider's platform

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('units') as batch:
        batch.add_column(sa.Column('provider_verified', sa.Boolean(), nullable=True))
    op.create_table(
        'review_decisions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('unit_id', sa.Integer(), sa.ForeignKey('units.id'), nullable=False),
        sa.Column('decision', sa.String(length=16), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('rejection_category', sa.String(length=32), nullable=True),
        sa.Column('decided_at', sa.DateTime(), nullable=False),
        sa.Column('sync_state', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('next_attempt_at', sa.DateTime(), nullable=True),
        sa.Column('synced_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('unit_id'),
    )
    op.create_table(
        'bonuses',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('unit_id', sa.Integer(), sa.ForeignKey('units.id'), nullable=False),
        sa.Column('worker_id', sa.Integer(), sa.ForeignKey('workers.id'), nullable=False),
        sa.Column('amount_cents', sa.Integer(), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('dedupe_key', sa.String(length=64), nullable=False),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('provider_ref', sa.String(length=200), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('next_attempt_at', sa.DateTime(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('paid_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('dedupe_key'),
    )
    op.create_index('ix_bonuses_unit_id', 'bonuses', ['unit_id'])
    op.create_index('ix_bonuses_worker_id', 'bonuses', ['worker_id'])


def downgrade() -> None:
    op.drop_table('bonuses')
    op.drop_table('review_decisions')
    with op.batch_alter_table('units') as batch:
        batch.drop_column('provider_verified')
